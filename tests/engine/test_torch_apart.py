"""torch's own bugs, apart from the kernel's: their own corpus folder, replay by kind, one
counted line in the report; and a backend's own refusal is torch's inconsistency, not a
check the kernel is missing."""

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from builders import conv

from convcheck import corpus
from convcheck.campaign import Budget, Campaign
from convcheck.check_ids import CHECK_IDS
from convcheck.cli import main
from convcheck.findings import findings
from convcheck.judgement import Judgement
from convcheck.judges import Judges
from convcheck.model import ModelRun
from convcheck.outcome import Outcome
from convcheck.report import format_campaign

ROOT = Path(__file__).resolve().parents[2]
ACCEPT = Outcome.accept((1, 4, 3))


def judgement(torch, no_onednn, torch_bug):
    run = ModelRun("legacy", False, ACCEPT, (), (), ())
    verdict = SimpleNamespace(outcome=torch, no_onednn=no_onednn, torch_bug=torch_bug)
    return Judgement(conv(), "legacy", run, run, [], ACCEPT, None, verdict, ACCEPT)


BUG = "verdict: oneDNN reject torch.onednn, no oneDNN accept; details"


@pytest.mark.parametrize(
    ("name", "j", "signatures"),
    [
        (
            "oneDNN refuses, torch without it accepts alike: torch's bug alone",
            judgement(Outcome.reject("torch.onednn"), ACCEPT, BUG),
            [("torch-bug", "verdict: oneDNN reject torch.onednn, no oneDNN accept")],
        ),
        (
            "the Empty backend refuses, the other path accepts other sizes: torch's bug, and "
            "the kernel held to the path that answered",
            judgement(Outcome.reject("torch.empty_select"), Outcome.accept((1, 4, 2)), BUG),
            [
                ("torch-bug", "verdict: oneDNN reject torch.onednn, no oneDNN accept"),
                ("wrong-result", "sizes"),
            ],
        ),
        (
            "both paths reject: a check the kernel is missing",
            judgement(Outcome.reject("torch.onednn"), Outcome.reject("stride.range"), None),
            [("missing-check", "torch.onednn")],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_backends_own_refusal(name, j, signatures):
    assert [f.signature for f in findings(j)] == signatures


def test_the_check_ids_are_those_of_docs_checks_md():
    text = (ROOT / "docs" / "checks.md").read_text()
    documented = set()
    for row in re.findall(r"^\|[^|\n]*\|[^|\n]*\|([^|\n]*)\|", text, re.M):
        documented |= set(re.findall(r"`([a-z_0-9]+\.[a-z_0-9]+)`", row))
    assert documented == CHECK_IDS


def shipped(kind: str) -> corpus.Entry:
    """A shipped convolution entry of ``kind``, from the folder its kind belongs in."""
    entries = corpus.load_all(ROOT / "corpus")
    return next(e for e in entries if e.kind == kind and e.case.OP == "convolution")


@pytest.fixture(scope="module")
def judges():
    pytest.importorskip("torch")
    with Judges("legacy", jobs=1) as panel:
        yield panel


def campaign_of(judges, tmp_path, torch_dir=None) -> Campaign:
    run = Campaign(judges, tmp_path / "corpus", budget=Budget(cases=2), torch_dir=torch_dir)
    run.submit([shipped("torch-bug").case, shipped("crash").case])
    return run


def kinds_in(folder: Path) -> set[str]:
    return {json.loads(p.read_text())["kind"] for p in folder.glob("*.json")}


def test_torch_bugs_go_to_the_torch_folder_and_one_report_line(judges, tmp_path):
    run = campaign_of(judges, tmp_path)
    assert kinds_in(tmp_path / "corpus" / "torch") == {"torch-bug"}
    assert "torch-bug" not in kinds_in(tmp_path / "corpus") and kinds_in(tmp_path / "corpus")
    args = SimpleNamespace(revision="legacy", target=None, engine="random", seed=0)
    report = format_campaign(run, args)
    torch_bugs = sum(f.kind == "torch-bug" for f in run.found.values())
    assert re.search(rf"torch: {torch_bugs} bugs? of its own", report)
    assert not re.search(r"^  torch-bug", report, re.M)
    shown = format_campaign(run, SimpleNamespace(**vars(args), show_torch_bugs=True))
    assert len(re.findall(r"^  torch-bug", shown, re.M)) == torch_bugs
    assert "of its own" not in shown


def test_a_torch_folder_of_ones_own(judges, tmp_path):
    campaign_of(judges, tmp_path, torch_dir=tmp_path / "elsewhere")
    assert kinds_in(tmp_path / "elsewhere") == {"torch-bug"}
    assert not (tmp_path / "corpus" / "torch").exists()


def test_replay_judges_each_entry_by_its_kind(tmp_path):
    """A torch bug that no longer shows is reported gone and fails nothing (nor is it
    judged without torch); a kernel entry that is not clean fails the replay."""
    pytest.importorskip("torch")
    gone = json.loads(shipped("torch-bug").path.read_text())
    gone["case"] = conv().to_json()  # a call torch answers alike either way
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "gone.json").write_text(json.dumps({**gone, "name": "gone"}))
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(tmp_path), "--revision", "legacy"], out, err) == 0, err.getvalue()
    assert re.search(r"^gone +torch's own bug: gone in torch ", out.getvalue(), re.M)
    assert "1 entry, 0 passed, 0 failed; 1 of torch's own bugs" in out.getvalue()
    crash = json.loads(shipped("crash").path.read_text())
    (tmp_path / "crash.json").write_text(json.dumps(crash))
    out = io.StringIO()
    assert main(["replay", str(tmp_path), "--revision", "legacy", "--no-torch"], out, err) == 1
    assert re.search(r"^gone +torch's own bug: not replayed \(--no-torch\)", out.getvalue(), re.M)
    assert "2 entries, 0 passed, 1 failed; 1 of torch's own bugs" in out.getvalue()
