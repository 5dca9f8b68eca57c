/*
 * host_impl.h — what the files of host/ share and nothing else includes.
 */
#ifndef TARN_HOST_IMPL_H
#define TARN_HOST_IMPL_H

#include "host.h"
#include "posix.h"

#endif /* TARN_HOST_IMPL_H */
