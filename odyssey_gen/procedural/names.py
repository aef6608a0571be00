"""Names and descriptions from a theme: a seeded namer that never repeats a name.

Names are what commands refer to, so they follow the engine's rules (``lower_snake_case``, unique
across areas, objects and NPCs, never ending in ``_<number>``). They are compounds of a *modifier* and
a *noun* of the right kind (``tide_ore``, ``drowned_nave``, ``salt_wraith``): the modifiers come first
from the theme's own words, then from a small stock of adjectives, then from invented words. Invented
words (``velmor``) give a game the unfamiliar vocabulary the paper asks for (A3.3): an agent must
learn by inspecting what a ``velmor_pike`` does. Every draw comes from the one RNG the builder passes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

__all__ = ["KINDS", "Namer", "theme_words"]

STOPWORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "nor",
        "of",
        "in",
        "on",
        "at",
        "to",
        "from",
        "by",
        "for",
        "with",
        "without",
        "into",
        "onto",
        "over",
        "under",
        "above",
        "below",
        "between",
        "where",
        "when",
        "while",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "than",
        "then",
        "so",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "having",
        "it",
        "its",
        "it's",
        "their",
        "them",
        "they",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "she",
        "his",
        "her",
        "him",
        "i",
        "me",
        "my",
        "mine",
        "not",
        "no",
        "only",
        "own",
        "same",
        "too",
        "very",
        "can",
        "will",
        "just",
        "should",
        "could",
        "would",
        "may",
        "might",
        "must",
        "shall",
        "keeps",
        "keep",
        "kept",
        "make",
        "makes",
        "made",
        "let",
        "lets",
        "get",
        "gets",
        "got",
        "go",
        "goes",
        "went",
        "come",
        "comes",
        "came",
        "some",
        "any",
        "every",
        "each",
        "all",
        "both",
        "few",
        "more",
        "most",
        "other",
        "such",
        "up",
        "down",
        "out",
        "off",
        "again",
        "once",
        "also",
        "still",
        "ever",
        "never",
        "always",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "first",
        "last",
        "new",
        "old",
        "many",
        "much",
        "long",
        "little",
        "own",
    )
)

#: Nouns by kind. Materials and foods are split by how they are obtained (raw: found; made: crafted).
KINDS: dict[str, tuple[str, ...]] = {
    "raw": (
        "ore",
        "clay",
        "reed",
        "resin",
        "bone",
        "hide",
        "salt",
        "sand",
        "shell",
        "flint",
        "stone",
        "wax",
        "silk",
        "moss",
        "ash",
        "tin",
        "copper",
        "peat",
        "kelp",
        "coral",
        "pearl",
        "amber",
        "tar",
        "fiber",
        "feather",
        "thorn",
        "root",
        "bark",
        "sap",
        "quartz",
        "slate",
        "lead",
        "silver",
        "chalk",
        "pitch",
        "wool",
        "horn",
        "scale",
        "glassfrit",
        "loam",
    ),
    "made": (
        "bar",
        "ingot",
        "plank",
        "cord",
        "thread",
        "cloth",
        "leather",
        "glue",
        "pane",
        "bead",
        "rivet",
        "plate",
        "wire",
        "brick",
        "tile",
        "rope",
        "pulp",
        "weave",
        "alloy",
        "strap",
        "dowel",
        "felt",
        "lacquer",
        "mortar",
        "ribbon",
        "spindle",
        "buckle",
        "hinge",
        "gear",
        "spring",
    ),
    "weapon": (
        "knife",
        "club",
        "spear",
        "blade",
        "axe",
        "hammer",
        "sickle",
        "pike",
        "flail",
        "mace",
        "glaive",
        "cudgel",
        "dagger",
        "sword",
        "hook",
        "maul",
        "staff",
        "trident",
        "halberd",
        "scythe",
        "sabre",
        "harpoon",
        "lance",
        "cleaver",
    ),
    "head": ("hood", "cap", "helm", "coif", "mask", "circlet"),
    "body": ("jerkin", "coat", "vest", "hauberk", "mantle", "cuirass", "tabard", "robe"),
    "legs": ("greaves", "leggings", "breeches", "chausses"),
    "feet": ("boots", "sandals", "clogs", "waders", "sabatons"),
    "hands": ("gloves", "gauntlets", "mitts", "bracers"),
    "shield": ("buckler", "shield", "targe", "pavise"),
    "write": ("stylus", "quill", "pen", "nib", "charcoal", "crayon"),
    "lockpick": ("lockpick", "shim", "probe", "pick"),
    "container": ("pouch", "satchel", "bag", "pack", "creel", "sack", "haversack", "basket", "kit", "case"),
    "writable": ("paper", "scroll", "slate", "leaf", "tablet", "vellum", "parchment", "card", "folio"),
    "food_raw": (
        "berries",
        "cress",
        "apple",
        "fish",
        "eel",
        "mushroom",
        "honey",
        "nuts",
        "crab",
        "egg",
        "plum",
        "turnip",
        "limpet",
        "fig",
        "gourd",
        "radish",
    ),
    "food_made": ("stew", "pie", "broth", "cake", "bun", "porridge", "jerky", "soup", "loaf", "pasty"),
    "station": (
        "workbench",
        "furnace",
        "anvil",
        "loom",
        "kiln",
        "forge",
        "press",
        "still",
        "altar",
        "vat",
        "grindstone",
        "cookfire",
        "bellows",
        "lathe",
        "crucible",
        "tannery",
    ),
    "key": ("key",),
    "currency": ("coin", "mark", "token", "chit", "bead", "scrip"),
    "trophy": ("heart", "seal", "crown", "relic", "sigil", "idol", "lens", "tongue", "core", "shard", "eye", "crest"),
    "enemy": (
        "rat",
        "wolf",
        "crab",
        "wraith",
        "husk",
        "shade",
        "hound",
        "beetle",
        "gull",
        "lurker",
        "drowner",
        "crawler",
        "stalker",
        "imp",
        "wisp",
        "golem",
        "spider",
        "serpent",
        "revenant",
        "moth",
        "leech",
        "ghoul",
        "mite",
        "boar",
        "heron",
        "sentinel",
        "mauler",
        "skulker",
    ),
    "boss": (
        "warden",
        "matriarch",
        "tyrant",
        "keeper",
        "leviathan",
        "sovereign",
        "abbot",
        "colossus",
        "hierophant",
        "primarch",
    ),
    "merchant": ("trader", "peddler", "chandler", "broker", "quartermaster", "tinker", "hawker", "sutler"),
    "guide": ("elder", "sage", "seer", "archivist", "pilot", "ferrywoman", "warden", "chronicler"),
    "villager": ("ferrier", "mender", "scribe", "fisher", "lamplighter", "gardener", "bellringer", "cooper"),
    "area": (
        "nave",
        "cloister",
        "quay",
        "gate",
        "court",
        "yard",
        "market",
        "archive",
        "crypt",
        "hall",
        "stair",
        "tower",
        "wharf",
        "causeway",
        "garden",
        "well",
        "chapel",
        "vault",
        "gallery",
        "bridge",
        "steps",
        "shoals",
        "lane",
        "plaza",
        "hollow",
        "crossing",
        "landing",
        "undercroft",
        "belfry",
        "terrace",
        "cistern",
        "orchard",
        "mill",
        "kitchen",
        "barracks",
        "dock",
        "grotto",
        "spring",
        "loft",
        "sluice",
    ),
    "place": (
        "Quarter",
        "Deep",
        "Reach",
        "Ward",
        "Heights",
        "Shallows",
        "Precinct",
        "Flats",
        "Spire",
        "Hollows",
        "Rise",
        "Narrows",
        "Barrens",
        "Commons",
        "Fens",
        "Stacks",
    ),
    "room": ("drill_hall", "practice_room", "training_yard"),
}

ADJECTIVES = (
    "grey",
    "salt",
    "drowned",
    "hollow",
    "black",
    "old",
    "high",
    "low",
    "cold",
    "silent",
    "sunken",
    "broken",
    "iron",
    "pale",
    "red",
    "green",
    "bitter",
    "lantern",
    "bone",
    "brine",
    "amber",
    "ashen",
    "crooked",
    "deep",
    "dusk",
    "ember",
    "frost",
    "gilded",
    "glass",
    "hushed",
    "moss",
    "mire",
    "north",
    "quiet",
    "rust",
    "shale",
    "silver",
    "slate",
    "smoke",
    "stone",
    "thorn",
    "tide",
    "twilight",
    "velvet",
    "wet",
    "white",
    "wild",
    "wind",
    "wyrm",
    "cinder",
)

_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "h",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "th",
    "sk",
    "dr",
    "gr",
    "br",
    "vr",
    "qu",
    "ch",
    "sh",
    "w",
)
_VOWELS = ("a", "e", "i", "o", "u", "ae", "ai", "ou", "y")
_CODAS = ("", "", "l", "n", "r", "s", "th", "k", "m", "sh", "nd", "rk", "lt")


def theme_words(theme: str) -> list[str]:
    """Content words of the theme in order of appearance (no stopwords, no repeats, 3+ letters)."""
    out: list[str] = []
    for word in re.findall(r"[a-z]+", theme.lower()):
        if len(word) >= 3 and word not in STOPWORDS and word not in out:
            out.append(word)
    return out


class Namer:
    """Unique names of every kind, drawn from one seeded RNG.

    ``strangeness`` is the share of modifiers that are invented words rather than theme words or
    adjectives (0: only readable compounds).
    """

    def __init__(self, theme: str, rng: random.Random, *, strangeness: float = 0.15):
        self.rng = rng
        self.words = theme_words(theme)
        self.strangeness = strangeness
        self.used: set[str] = set()
        self._invented: list[str] = []

    # ------------------------------------------------------------------ words
    def invented(self) -> str:
        """A new pronounceable word of two or three syllables (never one already made)."""
        rng = self.rng
        while True:
            n = rng.choice((2, 2, 3))
            word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(n)) + rng.choice(_CODAS)
            if 4 <= len(word) <= 10 and word not in self._invented and word not in STOPWORDS:
                self._invented.append(word)
                return word

    def modifier(self, theme_share: float = 0.45) -> str:
        r = self.rng.random()
        if r < self.strangeness:
            return self.rng.choice(self._invented) if self._invented and self.rng.random() < 0.5 else self.invented()
        if self.words and r < self.strangeness + theme_share:
            return self.rng.choice(self.words)
        return self.rng.choice(ADJECTIVES)

    def claim(self, name: str) -> str:
        self.used.add(name)
        return name

    def free(self, name: str) -> bool:
        return (
            name not in self.used
            and re.match(r"^[a-z][a-z0-9_]*$", name) is not None
            and re.search(r"_\d+$", name) is None
        )

    # ------------------------------------------------------------------ names
    def name(self, kind: str, *, bare_first: bool = False) -> str:
        """A fresh ``modifier_noun`` for ``kind`` (``bare_first``: try the plain noun first)."""
        nouns = KINDS[kind]
        if bare_first:
            for noun in nouns:
                if self.free(noun):
                    return self.claim(noun)
        for attempt in range(60):
            noun = self.rng.choice(nouns)
            mod = self.modifier() if attempt < 40 else self.invented()
            if mod == noun:
                continue
            candidate = f"{mod}_{noun}"
            if self.free(candidate):
                return self.claim(candidate)
        while True:  # invented words never run out
            candidate = f"{self.invented()}_{self.rng.choice(nouns)}"
            if self.free(candidate):
                return self.claim(candidate)

    def person(self, role: str) -> str:
        """A named individual: an invented given name and a role or theme word (``velmor_chandler``)."""
        pool = KINDS.get(role, (role,))
        while True:
            candidate = f"{self.invented()}_{self.rng.choice(pool)}"
            if self.free(candidate):
                return self.claim(candidate)

    def place_title(self) -> str:
        """A place's display name (free text, not a handle): ``The Drowned Quarter``."""
        mod = self.modifier(theme_share=0.6)
        return f"The {mod.capitalize()} {self.rng.choice(KINDS['place'])}"


def words_of(name: str) -> str:
    """A handle read as words: ``tide_ore`` -> ``tide ore``."""
    return name.replace("_", " ")


def article(phrase: str) -> str:
    return ("an " if phrase[:1] in "aeiou" else "a ") + phrase


def sentence(rng: random.Random, choices: Sequence[str], **slots: str) -> str:
    """One of ``choices`` with its ``{slots}`` filled, first letter capitalised."""
    text = rng.choice(choices).format(**slots)
    return text[:1].upper() + text[1:]
