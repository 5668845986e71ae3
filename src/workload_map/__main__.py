"""`python -m workload_map` runs the `wmap` CLI."""

from workload_map.cli.main import main

if __name__ == "__main__":
    main()
