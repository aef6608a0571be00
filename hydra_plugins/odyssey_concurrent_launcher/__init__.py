"""A Hydra launcher that plays many cells of a sweep at once in one process, one thread per cell.

``launcher=concurrent`` in ``odyssey run`` selects it (``hydra/launcher: odyssey_concurrent``). An
evaluation against an API or vLLM model waits on model calls, not on the CPU: threads that wait on
HTTP overlap, and one process holds one interpreter, not one per cell. Only :mod:`.config` and
:mod:`.concurrent_launcher` are imported when Hydra scans its plugins; the work is in :mod:`._core`.
"""
