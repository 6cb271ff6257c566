"""The `susbench` command line: one module per command group, thin (parse, call one function, print)."""
