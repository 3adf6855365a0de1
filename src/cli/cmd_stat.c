// SPDX-License-Identifier: MIT
#include "cli.h"

int cmd_stat(int argc, char **argv, struct cli *cli)
{
	(void)argc;
	(void)argv;
	(void)cli;
	cli_error("stat: not yet");
	return EXIT_FAIL;
}
