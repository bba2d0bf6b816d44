"""Running a lab: ask (or read an answer file), grade, reveal; the worked answers; batch mode.

Kept apart from the CLI (``vraid/cli/lab.py`` only parses arguments) so tests drive it directly.
Output goes through a ``say(text)`` callable; input through ``ask(prompt) -> str``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Callable

from vraid.errors import VraidError

from .framework import Lab, Question, show

Say = Callable[[str], None]


def header(lab: Lab, seed: int) -> str:
    papers = ", ".join(lab.seeds) if lab.seeds else "RAID basics"
    return f"lab {lab.name} (seed {seed}): {lab.title}  [papers: {papers}]"


def answer_file(lab: Lab, seed: int, questions: list[Question]) -> dict[str, Any]:
    """The worked answers in the answer-file format."""
    return {"lab": lab.name, "seed": seed, "answers": {q.key: q.json_answer() for q in questions}}


def worked(lab: Lab, seed: int, questions: list[Question], say: Say) -> None:
    """Every question with its answer and explanation (OSTEP's ``-c``)."""
    say(header(lab, seed))
    say(lab.setting(seed))
    for q in questions:
        say("")
        say(f"{q.key}. {q.prompt}")
        say(f"   answer: {show(q.answer)}")
        if q.explanation:
            say("   " + q.explanation.replace("\n", "\n   "))


def ask_all(lab: Lab, seed: int, questions: list[Question], ask: Callable[[str], str], say: Say) -> int:
    """Interactive: each question, the student's prediction, the verdict and the explanation.

    Returns the number of wrong answers."""
    say(header(lab, seed))
    say(lab.setting(seed))
    wrong = 0
    for q in questions:
        say("")
        form = f" [{q.form}]" if q.form else ""
        typed = ask(f"{q.key}. {q.prompt}{form}\n> ")
        ok, verdict = q.grade(typed)
        wrong += not ok
        say(f"   {verdict}")
        if q.explanation:
            say("   " + q.explanation.replace("\n", "\n   "))
    say("")
    say(f"{len(questions) - wrong} of {len(questions)} right")
    return wrong


def show_questions(lab: Lab, seed: int, questions: list[Question], say: Say) -> None:
    """The questions alone (stdin is not a terminal): answer them in a file, then check it."""
    say(header(lab, seed))
    say(lab.setting(seed))
    for q in questions:
        say("")
        form = f" [{q.form}]" if q.form else ""
        say(f"{q.key}. {q.prompt}{form}")
    keys = ", ".join(f'"{q.key}": ...' for q in questions[:2])
    say("")
    say(f'answer in a file {{"lab": "{lab.name}", "seed": {seed}, "answers": {{{keys}}}}} and grade it with '
        f"`vraid lab check {lab.name} FILE --seed {seed}`; `--answers` shows the worked answers")


#: the largest answer file read (a lab's answers are a few hundred bytes)
MAX_ANSWER_FILE = 1 << 20
#: the deepest nesting an answer file may have ({"answers": {"q1": [..]}} is 3 levels)
MAX_ANSWER_DEPTH = 16


def read_answers(path: Path, lab: Lab, seed: int | None) -> tuple[int, dict[str, Any]]:
    """(seed, answers) of an answer file, checked for shape.

    Raises:
        VraidError: naming what is wrong with the file.
    """
    from vraid.core.schema import depth

    fmt = f'write {{"lab": "{lab.name}", "seed": N, "answers": {{"q1": ...}}}}'
    try:
        with open(path, "rb") as f:  # at most one byte past the cap: /dev/zero is not read for ever
            raw = f.read(MAX_ANSWER_FILE + 1)
    except OSError as exc:
        raise VraidError(f"cannot read the answer file {path}: {exc.strerror or exc}", "give the path of a JSON file") from None
    if len(raw) > MAX_ANSWER_FILE:
        raise VraidError(f"{path} is larger than {MAX_ANSWER_FILE >> 20} MiB: not an answer file", fmt)
    if depth(raw) > MAX_ANSWER_DEPTH:
        raise VraidError(f"{path} is nested deeper than {MAX_ANSWER_DEPTH} levels: not an answer file", fmt)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise VraidError(f"{path} is not UTF-8 text (byte {exc.start} is not UTF-8)",
                         "save the answer file as UTF-8 (a UTF-16 file, as some Windows editors write, is not read)") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise VraidError(f"{path} is nested too deeply: not an answer file", fmt) from None
    except ValueError as exc:
        raise VraidError(f"{path} is not JSON: {exc}",
                         f'write {{"lab": "{lab.name}", "seed": N, "answers": {{"q1": ...}}}} '
                         f"(`vraid lab run {lab.name} --answers --json` shows the format)") from None
    if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
        raise VraidError(f"{path} has no \"answers\" object",
                         f'write {{"lab": "{lab.name}", "seed": N, "answers": {{"q1": ...}}}}')
    if "lab" in data and data["lab"] != lab.name:
        raise VraidError(f"{path} answers lab {data['lab']!r}, not {lab.name!r}",
                         f"check it with `vraid lab check {data['lab']} {path}`")
    file_seed = data.get("seed")
    if file_seed is not None and (isinstance(file_seed, bool) or not isinstance(file_seed, int)):
        raise VraidError(f"{path}: \"seed\" is {file_seed!r}, not a whole number", "write the seed the questions were dealt with")
    if seed is not None and file_seed is not None and seed != file_seed:
        raise VraidError(f"{path} answers seed {file_seed}, but --seed {seed} was given",
                         "drop --seed (the file's seed is used) or give the same one")
    use = seed if seed is not None else (file_seed if file_seed is not None else 0)
    return use, data["answers"]


def grade(lab: Lab, seed: int, questions: list[Question], answers: dict[str, Any], say: Say) -> int:
    """Grade ``answers`` (key -> value); returns the number wrong or missing.

    Raises:
        VraidError: for keys no question has (a typo would otherwise grade as missing).
    """
    keys = {q.key for q in questions}
    unknown = sorted(set(answers) - keys)
    if unknown:
        raise VraidError(f"the answer file has keys no question of {lab.name} (seed {seed}) has: {', '.join(unknown)}",
                         f"the questions are {', '.join(q.key for q in questions)}")
    say(header(lab, seed))
    wrong = 0
    for q in questions:
        if q.key not in answers:
            wrong += 1
            say(f"{q.key}: missing (the answer is {show(q.answer)})")
            ok = False
        else:
            ok, verdict = q.grade(answers[q.key])
            wrong += not ok
            say(f"{q.key}: {verdict}")
        if not ok and q.explanation:  # what the interactive run reveals: why the answer is what it is
            say("   " + q.explanation.replace("\n", "\n   "))
    say(f"{len(questions) - wrong} of {len(questions)} right")
    return wrong


def observe(lab: Lab, seed: int, questions: list[Question], workdir: Path | None, say: Say) -> int:
    """A mount lab's real run, checked against the computed answers; returns disagreements."""
    by_key = {q.key: q for q in questions}
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix=f"vraid-lab-{lab.name}-") as tmp:
            seen = lab.live(seed, Path(tmp), say)
    else:
        workdir.mkdir(parents=True, exist_ok=True)
        seen = lab.live(seed, workdir, say)
    bad = 0
    for key, value in seen.items():
        ok, verdict = by_key[key].grade(value)
        bad += not ok
        say(f"{key} on the mount: {show(value)} ({'agrees' if ok else 'DISAGREES: ' + verdict})")
    return bad


def batch(lab: Lab, seed: int, say: Say, workdir: Path | None = None, *, live: bool = True) -> int:
    """The lab end to end with its own answers, through the answer-file format; a mount lab also
    runs its real part. Returns the number of disagreements (0: all is well)."""
    questions = lab.questions(seed)
    if not questions:
        say(f"lab {lab.name} dealt no questions")
        return 1
    text = json.dumps(answer_file(lab, seed, questions))
    wrong = grade(lab, seed, lab.questions(seed), json.loads(text)["answers"], say)
    if lab.mount and live:
        wrong += observe(lab, seed, questions, workdir, say)
    return wrong
