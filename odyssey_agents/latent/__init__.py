"""Experience kept in the model's hidden states rather than in text (paper §4, latent agents).

* :mod:`~odyssey_agents.latent.memoryllm` — ``agent=memoryllm`` and ``agent=mplus``: the paper's latent
  agents. MemoryLLM's pool of memory tokens in every layer, updated by the model itself after each step
  with a random share forgotten (:mod:`~odyssey_agents.latent.memory_pool`), and M+'s long-term memory
  of the forgotten tokens, retrieved per layer at every call; on any Llama-family model, or on a released
  checkpoint read as data (:mod:`~odyssey_agents.latent.checkpoint`).
* :mod:`~odyssey_agents.latent.kv_window` — ``agent=kv_window`` (formerly ``latent_memory``): the raw keys
  and values of recent steps (:mod:`~odyssey_agents.latent.pool`) read by attention, a windowed context.

Both read their memory through the model's own attention (:mod:`~odyssey_agents.latent.attention`: a
function registered with transformers' attention registry puts the memory's keys and values in front of
each layer's own). Needs the ``train`` extra (torch); nothing is imported until an agent is chosen.
"""
