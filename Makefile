# Convenience targets only: the build is CMake + Ninja (scripts/build, scripts/test).
#   make bench         the benchmark report, full profile (bench/run: ~14 minutes on 2 cores)
#   make bench-quick   the same with short runs (bench/run --quick: ~3 minutes)
.PHONY: bench bench-quick
bench:
	bench/run
bench-quick:
	bench/run --quick
