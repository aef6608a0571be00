"""The engine's step rules: processes that run every step after the actions.

Their run order is declared in one place, :mod:`odyssey_env.steprules.order`.
"""
