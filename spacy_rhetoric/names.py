"""Names, titles and forms of address: a list of them is no figure.

The opening of a speech or a letter names its addressees ("Vice President Johnson, Mr.
Speaker, Mr. Chief Justice, President Eisenhower, Vice President Nixon, President
Truman, reverend clergy, fellow citizens, we observe today ..."). Its members look alike
because names and titles do, and a reader dismisses such a list at once as a
parallelism, an anaphora, a gradatio or an asyndeton. The figure rules
(``figures.repetition``, ``figures.conjunction``) and the parallelism tagger
(``parallelism.reading``) ask these questions of a member or branch (a token range):

* a *name word* (``is_name_word``): capitalised, and an honorific or title
  (``HONORIFICS``: "Mr.", "President", "Herr"), or tagged PROPN where the tagger is
  trusted, or, untagged or in a language whose tagger is not trusted
  (``UNTRUSTED_POS``), a word not opening its sentence in a language that capitalises
  only names and sentence openings (``CAPITAL_NAMES``);
* a *name* (``is_name``): at most ``NAME_MAX_WORDS`` words, more name words than other
  words, short lower-case particles between name words aside ("Members of the
  Congress", "Prince of Wales");
* an *address* (``is_address``): a name, or at most ``ADDRESS_MAX_WORDS`` words holding
  a word of address (``ADDRESS_WORDS``: "fellow citizens", "reverend clergy", "meine
  Damen und Herren") and no verb;
* a *list of names* (``is_name_list``): >= 2 members, each an address, not all the same
  words ("Quis produxit? Appius. ... Appius." repeats one name: an epiphora).

What they need to know of the doc (its language, whether it is tagged and has
sentences) is read once per doc (``doc_names``), so that asking it of every colon of a
long doc stays linear.
"""

from typing import NamedTuple, Optional, Sequence, Tuple

from spacy.tokens import Doc, Token

NAME_MAX_WORDS = 6  # words of the longest name or title ("Vice President of the United States")
ADDRESS_MAX_WORDS = 4  # words of a form of address ("sehr geehrte Damen und Herren")
PARTICLE_MAX_CHARS = 3  # a lower-case word between name words ("of", "the", "von", "da")
# languages that capitalise names (and sentence openings) only: untagged, a capital
# inside a sentence marks a name (not German, which capitalises every noun)
CAPITAL_NAMES = frozenset(["en", "la"])
# languages whose base tagger is not trusted (Latin: trained on Dante's Latin, it tags a
# sentence's capitalised first word PROPN and misses classical forms): the capital
# decides names there, and the figure rules compare words whatever their tag
UNTRUSTED_POS = frozenset(["la"])
SENTENCE_FINAL = frozenset([".", "!", "?", ";", ":", "…", "..."])
VERB_POS = frozenset(["VERB", "AUX"])
# honorifics and titles, lower case without a final period; they count capitalised only
# ("Mr. Speaker", "President Truman", "Herr Präsident", "Frau Merkel")
HONORIFICS = frozenset(
    # English
    "mr mrs ms miss mister messrs dr prof professor sir dame madam madame lady lord "
    "president senator governor mayor congressman congresswoman representative speaker "
    "chairman chairwoman secretary ambassador justice judge chief general colonel major "
    "captain admiral lieutenant sergeant reverend rev father bishop archbishop cardinal "
    "pope king queen prince princess duke duchess earl baron st saint excellency majesty "
    "highness "
    # German
    "herr herrn herren frau fräulein präsident präsidentin kanzler kanzlerin "
    "bundeskanzler bundeskanzlerin bundespräsident bundespräsidentin minister "
    "ministerin bürgermeister bürgermeisterin abgeordneter abgeordnete graf gräfin "
    "fürst fürstin könig königin kaiser kaiserin pfarrer".split()
)
# words of address, lower case: a short member holding one addresses its hearers
# ("fellow citizens", "reverend clergy", "ladies and gentlemen", "liebe Kolleginnen
# und Kollegen", "Quirites", "patres conscripti")
ADDRESS_WORDS = frozenset(
    "fellow ladies gentlemen reverend honourable honorable distinguished "
    "damen herren mitbürger mitbürgerinnen kollegen kolleginnen geehrte verehrte "
    "quirites conscripti".split()
)


class DocNames(NamedTuple):
    """A doc as the name questions read it (``doc_names``).

    doc (Doc): the doc.
    lang (str): its language.
    tagged (bool): whether it has POS tags.
    sentences (bool): whether it has sentence starts.
    """

    doc: Doc
    lang: str
    tagged: bool
    sentences: bool


def doc_names(doc: Doc, lang: Optional[str] = None) -> DocNames:
    """doc (Doc): the doc.
    lang (Optional[str]): its language (None: ``doc.lang_``).
    RETURNS (DocNames): what the name questions read of it, once per doc.
    """
    return DocNames(
        doc, lang or doc.lang_, doc.has_annotation("POS"), doc.has_annotation("SENT_START")
    )


def _letters(token: Token) -> bool:
    return any(ch.isalpha() for ch in token.text)


def _opens_sentence(names: DocNames, token: Token) -> bool:
    """Whether a token opens its sentence: by the doc's sentences where it has them,
    else after the doc's start or a sentence-final mark."""
    if names.sentences:
        return bool(token.is_sent_start)
    doc = names.doc
    i = token.i - 1
    while i >= 0 and doc[i].is_space:
        i -= 1
    return i < 0 or doc[i].text in SENTENCE_FINAL


def is_name_word(names: DocNames, token: Token) -> bool:
    """Whether a token is a name word (see the module docstring).

    names (DocNames): its doc (``doc_names``).
    token (Token): the token.
    RETURNS (bool): whether it is a capitalised honorific, name or title.
    """
    text = token.text
    if not text[:1].isupper():
        return False
    if text.rstrip(".").lower() in HONORIFICS:
        return True
    if names.tagged and names.lang not in UNTRUSTED_POS:
        return token.pos_ == "PROPN"
    return names.lang in CAPITAL_NAMES and not _opens_sentence(names, token)


def _name_counts(names: DocNames, start: int, end: int) -> Tuple[int, int, int]:
    """RETURNS (Tuple[int, int, int]): the words of a range (tokens holding a letter),
    its name words, and its other words (particles between name words aside); (0, 0, 0)
    where the range holds more than ``NAME_MAX_WORDS`` words."""
    if end - start > 3 * NAME_MAX_WORDS:  # more tokens than a name holds with its marks
        return 0, 0, 0
    words = [t for t in names.doc[start:end] if _letters(t)]
    if not words or len(words) > NAME_MAX_WORDS:
        return 0, 0, 0
    flags = [is_name_word(names, t) for t in words]
    others = 0
    for k, (token, name) in enumerate(zip(words, flags)):
        if name:
            continue
        particle = (
            any(flags[:k])
            and any(flags[k + 1 :])
            and token.text.islower()
            and len(token.text) <= PARTICLE_MAX_CHARS
        )
        others += not particle
    return len(words), sum(flags), others


def is_name(names: DocNames, start: int, end: int) -> bool:
    """Whether a token range is a name or title ("Vice President Johnson", "Mr. Chief
    Justice", "Members of the Congress"; see the module docstring).

    names (DocNames): the doc (``doc_names``).
    start (int): the first token of the range.
    end (int): one past its last token.
    RETURNS (bool): whether its name words outnumber its other words.
    """
    _, found, others = _name_counts(names, start, end)
    return found > others


def is_address(names: DocNames, start: int, end: int) -> bool:
    """Whether a token range is a name, title or form of address ("fellow citizens",
    "reverend clergy", "meine Damen und Herren"; see the module docstring).

    names (DocNames): the doc (``doc_names``).
    start (int): the first token of the range.
    end (int): one past its last token.
    RETURNS (bool): whether the range addresses or names someone, and says nothing else.
    """
    n_words, found, others = _name_counts(names, start, end)
    if not n_words:
        return False
    if found > others:
        return True
    if n_words > ADDRESS_MAX_WORDS:
        return False
    tokens = names.doc[start:end]
    if names.tagged and any(t.pos_ in VERB_POS for t in tokens):
        return False
    return any(t.text.lower() in ADDRESS_WORDS for t in tokens)


def is_name_list(names: DocNames, members: Sequence[Tuple[int, int]]) -> bool:
    """Whether members (token ranges) are a list of names, titles and addresses, not a
    figure (see the module docstring): >= 2 members, each an address, and not one
    name repeated.

    names (DocNames): the doc (``doc_names``).
    members (Sequence[Tuple[int, int]]): (start, end) per member.
    RETURNS (bool): whether the members only name or address people.
    """
    if len(members) < 2 or not all(is_address(names, s, e) for s, e in members):
        return False
    doc = names.doc
    texts = {tuple(t.text.lower() for t in doc[s:e] if _letters(t)) for s, e in members}
    return len(texts) > 1
