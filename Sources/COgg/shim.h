// libogg for Swift: plain functions, nothing to wrap yet.
#ifndef BEDRUD_COGG_SHIM_H
#define BEDRUD_COGG_SHIM_H
#include <ogg/ogg.h>
#endif
