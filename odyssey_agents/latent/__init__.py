"""Latent memory: experience kept in the model's hidden states rather than in text (paper §4).

:mod:`~odyssey_agents.latent.pool` holds a bounded pool of per-layer key/value vectors;
:mod:`~odyssey_agents.latent.attention` lets any Hugging Face causal LM read it through its own
attention (a registered attention function: the pool is prepended to every layer's keys and values);
:mod:`~odyssey_agents.latent.agent` is ``agent=latent_memory``, which writes each step into the pool
and acts and answers with the pool attached. Needs the ``train`` extra (torch); nothing is imported
until the agent is chosen.
"""
