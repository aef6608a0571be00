"""QA diagnostics (paper §3.4): World-Knowledge questions from game data, Episodic-Memory questions
from a trajectory, asking an agent, and the contamination filter.

Every question is multiple choice with its answer computed from data and checked by an independent
recomputation before it is asked; sampling is seeded with string seeds and never iterates sets, so
the same (game, seed) gives the same questions in any process.
"""

from odyssey_eval.qa.ask import QARound, answered, ask_questions
from odyssey_eval.qa.contamination import contamination_report
from odyssey_eval.qa.episodic import episodic_questions, verify_episodic
from odyssey_eval.qa.questions import Question, QuestionError
from odyssey_eval.qa.world_knowledge import verify_world_knowledge, world_knowledge_questions

__all__ = [
    "QARound",
    "Question",
    "QuestionError",
    "answered",
    "ask_questions",
    "contamination_report",
    "episodic_questions",
    "verify_episodic",
    "verify_world_knowledge",
    "world_knowledge_questions",
]
