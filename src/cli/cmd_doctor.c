// SPDX-License-Identifier: MIT
#include "cli.h"

int cmd_doctor(int argc, char **argv, struct cli *cli)
{
	(void)argc;
	(void)argv;
	(void)cli;
	cli_error("doctor: not yet");
	return EXIT_FAIL;
}
