// SPDX-License-Identifier: MIT
/* Placeholder so the host library has a source until the symbol layer lands. */
#include <sonde/symbols.h>
