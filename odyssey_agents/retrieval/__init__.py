"""The retrieval paradigms of paper §4: VanillaRAG, Mem0, RAPTOR and Voyager (the ``rag`` extra).

They share a sentence-transformers embedder (:mod:`.embedder`, every call counted), a faiss graph
index under stable ids (:mod:`.index`) and the ReAct step with its add-ons (:mod:`.base`). Nothing
here is imported by ``import odyssey_agents``; the registry imports a paradigm's module when a run
asks for it, and a missing package is one line naming the command that installs the ``rag`` extra here
(``pip install -e ".[rag]"`` in a clone: :func:`odyssey_env.extras.install_command`).
"""
