"""Hardware builds: catalog, memory estimator, recommendation rules, build files. No UI imports."""
