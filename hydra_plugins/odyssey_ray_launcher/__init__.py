"""A Hydra launcher that runs a sweep's jobs as Ray tasks, on Ray's own API.

``launcher=ray`` in ``odyssey run`` selects it (``hydra/launcher: odyssey_ray``). Why not Hydra's
``hydra-ray-launcher``: see ``docs/evaluation.md`` (Launchers). Only :mod:`.config` and
:mod:`.ray_launcher` are imported when Hydra scans its plugins, and neither imports Ray: the ``ray``
extra is needed only when a sweep actually runs on it.
"""
