"""The engine's action rules, one module per group of related verbs.

Each verb is a class marked with :func:`odyssey_env.rules.action_rule`; a game's ``rules.py`` may
replace one by defining a rule with the same verb.
"""
