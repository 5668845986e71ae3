"""Renderers of the CLI: the human tree of a workload view (`tree`), aligned tables (`text.align`), and JSON/YAML
(`machine`). They read only what they are given (a `WorkloadView`, rows); rich is imported only to colour a
terminal."""
