/*
 * Unit tests of lib/spa/spa_history.c: records of the first layout (time
 * and command only, as pools written before hosts and internal events
 * were kept hold them) still decode; the second layout round-trips
 * through a real pool (commands with user and host, internal events with
 * their txg) and survives a reopen; damaged records are refused.
 */
#include "tt.h"
#include "tt_pool.h"

#include <unistd.h>

/* A record as the first layout wrote it: u64 time, char cmd[496], u64 0. */
static void
old_record(uint8_t *buf, uint64_t time, const char *cmd)
{
	memset(buf, 0, SPA_HISTORY_RECSIZE);
	memcpy(buf, &time, 8);
	memcpy(buf + 8, cmd, strlen(cmd));
}

static void
test_decode_old_layout(void)
{
	uint8_t buf[SPA_HISTORY_RECSIZE];
	spa_history_ent_t e;
	old_record(buf, 1700000000, "zpool create tank /d/a");
	TT_OK(spa_history_decode(buf, sizeof (buf), &e));
	TT_EQ(e.she_time, 1700000000);
	TT_EQ(e.she_kind, SPA_HIST_CMD);
	TT_CHECK(!e.she_long);
	TT_CHECK(strcmp(e.she_cmd, "zpool create tank /d/a") == 0);
	/* a command of 495 bytes, the longest the first layout held */
	char longcmd[496];
	memset(longcmd, 'x', 495);
	longcmd[495] = '\0';
	old_record(buf, 1, longcmd);
	TT_OK(spa_history_decode(buf, sizeof (buf), &e));
	TT_EQ(strlen(e.she_cmd), 495);
	/* no terminator at all: cut, never read past the record */
	memset(buf + 8, 'y', 496);
	TT_OK(spa_history_decode(buf, sizeof (buf), &e));
	TT_EQ(strlen(e.she_cmd), 495);
}

static void
test_decode_damaged(void)
{
	uint8_t buf[SPA_HISTORY_RECSIZE];
	spa_history_ent_t e;
	old_record(buf, 1, "zpool scrub tank");
	uint64_t info = 0x1234;                 /* neither layout */
	memcpy(buf + 504, &info, 8);
	TT_EQ(spa_history_decode(buf, sizeof (buf), &e), EIO);
	info = 1ULL << 63;                      /* second layout, unknown kind */
	memcpy(buf + 504, &info, 8);
	uint32_t kind = 7;
	memcpy(buf + 484, &kind, 4);
	TT_EQ(spa_history_decode(buf, sizeof (buf), &e), EIO);
	kind = 1;                               /* unterminated text and host */
	memcpy(buf + 484, &kind, 4);
	memset(buf + 8, 'z', 464);
	TT_OK(spa_history_decode(buf, sizeof (buf), &e));
	TT_EQ(strlen(e.she_cmd), 399);
	TT_EQ(strlen(e.she_host), 63);
	TT_EQ(spa_history_decode(buf, 100, &e), EINVAL);
}

static void
test_round_trip(void)
{
	tt_pool_devs_t d;
	tt_pool_files(&d, 1, 128 * MiB);
	spa_t *spa = tt_pool_create(&d, "hist", NULL, NULL);
	TT_OK(spa_history_log_as(spa, "zfs create hist/a", 1234));
	TT_OK(spa_history_log_internal(spa, 42, "create hist/a (%d) ", 5));
	TT_OK(spa_history_log_internal(spa, 0, "scan done errors=%d", 0));
	TT_OK(spa_history_log(spa, "zpool scrub hist"));
	spa_close(spa);
	spa = tt_pool_reopen(&d, 0, NULL);
	spa_history_ent_t *ents;
	int n;
	TT_OK(spa_history_get(spa, &ents, &n));
	TT_EQ(n, 4);
	char host[64];
	TT_OK(gethostname(host, sizeof (host)));
	host[63] = '\0';
	TT_EQ(ents[0].she_kind, SPA_HIST_CMD);
	TT_CHECK(ents[0].she_long);
	TT_EQ(ents[0].she_uid, 1234);
	TT_CHECK(strcmp(ents[0].she_cmd, "zfs create hist/a") == 0);
	TT_CHECK(strcmp(ents[0].she_host, host) == 0);
	TT_EQ(ents[1].she_kind, SPA_HIST_INTERNAL);
	TT_EQ(ents[1].she_txg, 42);
	TT_CHECK(strcmp(ents[1].she_cmd, "create hist/a (5) ") == 0);
	TT_EQ(ents[2].she_kind, SPA_HIST_INTERNAL);
	TT_CHECK(ents[2].she_txg > 0);          /* the txg it was written in */
	TT_EQ(ents[3].she_uid, (uint64_t)getuid());
	TT_CHECK(ents[0].she_time > 0 && ents[3].she_time >= ents[0].she_time);
	tarn_free(ents);
	TT_OK(spa_destroy(spa));
	tt_pool_files_remove(&d);
}

static void
test_cleanup(void)
{
	tt_tmpdir_cleanup();
}

TT_MAIN(
	{ "decode_old_layout", test_decode_old_layout },
	{ "decode_damaged", test_decode_damaged },
	{ "round_trip", test_round_trip },
	{ "cleanup", test_cleanup },
)
