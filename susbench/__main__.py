"""`python -m susbench` is the same as the `susbench` command."""

from susbench.cli.main import main

main()
