// SPDX-License-Identifier: MIT
/*
 * cxx_names [SECONDS]: a C++ workload for symbol names, compiled by the
 * tests themselves with g++ (the build is C only).  Its time goes to a
 * function template in a namespace (~50%) and to a member function of a
 * class template in a nested namespace, instantiated twice (~25% each),
 * so a report lists three mangled names: outer::weighted<3>,
 * outer::inner::Accum<unsigned long>::spin and Accum<double>::spin.
 */
#include <cstdlib>
#include <ctime>

namespace outer {
namespace inner {
template <typename T> struct Accum {
	T v{};
	__attribute__((noinline)) void spin(unsigned long n)
	{
		for (unsigned long i = 0; i < n; i++)
			v = v * 3 + static_cast<T>(i);
	}
};
} // namespace inner

template <int N> __attribute__((noinline)) long weighted(long x)
{
	for (int i = 0; i < N * 20000; i++)
		x = x * 6364136223846793005L + 1442695040888963407L;
	return x;
}
} // namespace outer

static double now()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

volatile long sink;

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	outer::inner::Accum<unsigned long> a;
	outer::inner::Accum<double> b;
	while (now() < end) {
		a.spin(40000);
		b.spin(20000);
		sink = outer::weighted<3>(sink);
	}
	sink = (long)a.v + (long)b.v;
	return 0;
}
