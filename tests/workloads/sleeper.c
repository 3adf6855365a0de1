// SPDX-License-Identifier: MIT
/* sleeper N MS: sleeps N times for MS milliseconds (N voluntary switches, N wakeups). */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long ms = argc > 2 ? atol(argv[2]) : 1;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	for (long i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	return 0;
}
