"""``companion evaluate --against``: two configs read the same photos, compared site by site."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from companion.cli import main
from companion.rules.board import Site
from companion.vision.evaluate import DIFF_COLUMNS, site_differences, site_verdicts
from companion.vision.settings import load_overrides, section


def _site(city: int, row: int, col: int, **kw: object) -> dict:
    return {"city": city, "row": row, "col": col, **kw}


BUILT = {Site(0, 0, 0): (3, "red"), Site(0, 0, 1): (2, "blue"), Site(0, 0, 2): (5, "red")}
# every site visible (the empty ones listed empty) but 0NE, behind a tower
TRUTH = {"board": {"sites": [s.to_json() | {"height": h, "owner": o}
                             for s, (h, o) in BUILT.items()]},
         "expected": {"sites": [s.to_json() | {"height": BUILT.get(s, (0, None))[0],
                                               "owner": BUILT.get(s, (0, None))[1]}
                                for s in map(Site.from_index, range(54)) if s != Site(0, 0, 2)],
                      "unseen": [_site(0, 0, 2)]}}


def _reading(**sites: object) -> dict:
    """A reading: every site empty but those given as code=(height, owner) or "unseen"."""
    out: dict = {"sites": [], "unseen": []}
    for i in range(54):
        s = Site.from_index(i)
        v = sites.get(f"c{s.code}", (0, None))
        if v == "unseen":
            out["unseen"].append(s.to_json())
        else:
            h, o = v  # type: ignore[misc]
            out["sites"].append(s.to_json() | {"height": h, "owner": o})
    return out


def test_each_site_is_judged_once() -> None:
    v = site_verdicts(_reading(c0NW=(3, "red"), c0N=(1, "blue"), c0NE=(4, "red"),
                               c0W="unseen"), TRUTH)
    assert v[Site(0, 0, 0)] == ("3 red", "right")
    assert v[Site(0, 0, 1)] == ("1 blue", "wrong")
    assert v[Site(0, 0, 2)] == ("4 red", "hidden_read")  # hidden, guessed wrong
    assert v[Site(0, 1, 0)] == ("unseen", "unseen")
    assert v[Site(1, 0, 0)] == ("empty", "right")


def test_only_the_sites_read_differently_are_listed_and_judged() -> None:
    a = _reading(c0NW=(3, "red"), c0N=(1, "blue"), c0NE="unseen", c0W="unseen")
    b = _reading(c0NW=(3, "red"), c0N=(2, "blue"), c0NE=(4, "red"), c0W=(1, "red"),
                 c1C=(1, "green"))
    rows = site_differences("p", TRUTH, a, b)
    assert [(r["site"], r["truth"], r["a"], r["b"], r["a_verdict"], r["b_verdict"],
             r["change"]) for r in rows] == [
        ("0N", "2 blue", "1 blue", "2 blue", "wrong", "right", "better"),
        ("0NE", "5 red", "unseen", "4 red", "hidden", "hidden_read", "worse"),
        ("0W", "empty", "unseen", "1 red", "unseen", "wrong", "worse"),
        ("1C", "empty", "empty", "1 green", "right", "wrong", "worse")]
    assert site_differences("p", TRUTH, a, a) == []
    # why the reader left a site unseen comes beside each reading (an unseen site's only)
    rows = site_differences("p", TRUTH, a, b, {"0NE": "hidden", "0W": "covered",
                                               "0N": "close"}, {})
    assert [(r["site"], r["a_reason"], r["b_reason"]) for r in rows] == [
        ("0N", "", ""), ("0NE", "hidden", ""), ("0W", "covered", ""), ("1C", "", "")]
    # a read that failed counts as every site unseen (every one listed: it reads "failed")
    failed = site_differences("p", TRUTH, None, a)
    assert len(failed) == 54 and {r["a"] for r in failed} == {"failed"}
    assert [(r["site"], r["a_verdict"], r["b_verdict"], r["change"]) for r in failed[:4]] == [
        ("0NW", "unseen", "right", "better"), ("0N", "unseen", "wrong", "worse"),
        ("0NE", "hidden", "hidden", "same"), ("0W", "unseen", "unseen", "same")]


@pytest.mark.parametrize("text,message", [
    ('{"sites": {"glare_lg": 0.3}}', "inline config: no key sites.glare_lg in the shipped config"),
    ('{"site": {"glare_log": 0.3}}', "inline config: no config section 'site'"),
    ('{"sites": 3}', "inline config: section 'sites' must be an object"),
    ('{"sites": ', "inline config: not JSON (Expecting value, line 1)"),
    ('{"sites": {"glare_log": "x"}}', "inline config: sites.glare_log must be a number, got 'x'"),
    ('{"sites": {"occlusion": 1}}', "inline config: sites.occlusion must be true or false, got 1"),
    ('{"sites": {"lateral_mm": 5}}', "inline config: sites.lateral_mm must be a list, got 5"),
    # (a JSON list was taken for a file name: "[1]: No such file or directory")
    ("[1]", "inline config: expected an object of config sections"),
    # a list's items are of the shipped items' kind
    ('{"sites": {"lateral_mm": [-5, "0", 5]}}',
     "inline config: sites.lateral_mm[1] must be a number, got '0'"),
    # a searched grid (a section's _grids) is [from, to, step]: a zero step would
    # never end, a short list says nothing of its step
    ('{"tone": {"gains": [0.6, 1.6, 0]}}',
     "inline config: tone.gains must be [from, to, step] with 0 < from <= to and a step "
     "above 0, got [0.6, 1.6, 0]"),
    ('{"tone": {"exponents": [2.0, 0.5, 0.05]}}',
     "inline config: tone.exponents must be [from, to, step] with 0 < from <= to and a "
     "step above 0, got [2.0, 0.5, 0.05]"),
    ('{"tone": {"gains": [0.6, 1.6]}}',
     "inline config: tone.gains must be [from, to, step], got [0.6, 1.6]"),
    ('{"sharpness": {"sigmas": [-1, 4.0, 0.1]}}',
     "inline config: sharpness.sigmas must be [from, to, step] with 0 < from <= to and a "
     "step above 0, got [-1, 4.0, 0.1]"),
    # a scorer replaces the shipped one whole: its own shape is checked before any read
    ('{"sites": {"scorer": {"W1": [[1]]}}}',
     "inline config: sites.scorer: a network needs 'features'"),
    ('{"sites": {"scorer": {"emty": 1}}}',
     "inline config: sites.scorer: no feature 'emty' (a network needs W1)"),
    ('{"sites": {"scorer": {"empty": "x"}}}',
     "inline config: sites.scorer: a linear scorer's weights must be numbers"),
])
def test_overrides_that_would_change_nothing_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        load_overrides(text)
    assert str(exc.value) == message


def test_overrides_from_a_file(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text('{"_doc": "why", "sites": {"glare_log": 0.3}}', encoding="utf-8")
    assert load_overrides(str(f)) == {"_doc": "why", "sites": {"glare_log": 0.3}}
    f.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.json: expected an object of config sections$"):
        load_overrides(str(f))
    f.write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match=r"a\.json: not UTF-8 text$"):
        load_overrides(str(f))
    # a shipped null (the board profile's own value) takes a number; a number no null
    assert load_overrides('{"sites": {"steep_storey_mm": 2.0}}') == {
        "sites": {"steep_storey_mm": 2.0}}
    with pytest.raises(ValueError, match=r"sites\.glare_log must be a number, got None$"):
        load_overrides('{"sites": {"glare_log": null}}')
    # a null where the stage reads null as a rule of its own (sites._nullable): the
    # print learnt from every site read empty
    assert load_overrides('{"sites": {"print_template_margin": null}}') == {
        "sites": {"print_template_margin": None}}
    # the doubt rules of the fifty-seventh session, each turned off by a null
    for key in ("board_foot_doubt", "tower_empty_doubt_margin", "empty_doubt_board"):
        assert load_overrides(json.dumps({"sites": {key: None}})) == {"sites": {key: None}}


def test_a_scorer_override_of_the_wrong_shape_is_refused() -> None:
    shipped = section("sites")["scorer"]
    # the shipped network given back whole is accepted as it is
    assert load_overrides(json.dumps({"sites": {"scorer": shipped}})) == {
        "sites": {"scorer": shipped}}
    for key, cut, message in (
            ("W1", lambda v: v[:-1], "W1 must be 22 x 16 numbers for 22 features and 16 "
                                     "hidden units, got 21 x 16"),
            ("w2", lambda v: v[:3], "w2 must be 16 numbers for 22 features and 16 hidden "
                                    "units, got 3"),
            ("features", lambda v: v[:-1], "scale must be 21 numbers for 21 features and "
                                           "16 hidden units, got 22"),
            ("wl", lambda v: "x", "scale, W1, b1, w2 and wl must be numbers"),
            ("bias", lambda v: 1.0, "a network has no 'bias'"),
            ("b1", lambda v: [v], "b1 must be a list of numbers (one per hidden unit)")):
        bad = {**shipped, key: cut(shipped.get(key))}
        with pytest.raises(ValueError) as exc:
            load_overrides(json.dumps({"sites": {"scorer": bad}}))
        assert str(exc.value) == f"inline config: sites.scorer: {message}", key


def test_bad_overrides_are_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--n", "1", "--against", '{"sites": {"nope": 1}}']) == 1
    assert capsys.readouterr().err == (
        "companion evaluate: inline config: no key sites.nope in the shipped config\n")
    assert main(["evaluate", "--n", "1", "--diff", "d.csv"]) == 1
    assert capsys.readouterr().err == (
        "companion evaluate: --diff needs --against (the second config to compare with)\n")


def test_two_configs_compared_site_by_site(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # without occlusion the reader guesses at hidden sites instead of reporting them unseen
    off = '{"sites": {"occlusion": false}}'
    args = ["evaluate", "--kind", "mounted", "--n", "2", "--seed", "11", "--json"]
    assert main([*args, "--against", off, "--diff", str(tmp_path / "d.csv"),
                 "--csv", str(tmp_path / "rows.csv")]) == 0
    out = json.loads(capsys.readouterr().out)["mounted"]
    assert main([*args, "--config", off]) == 0
    alone = json.loads(capsys.readouterr().out)["mounted"]
    a, b, d = out, out["against"], out["differences"]
    # the second config's totals are what a run under it alone gives
    for key in ("visible_sites", "wrong", "unseen_visible", "hidden", "hidden_read", "cards"):
        assert b[key] == alone[key], key
    with open(tmp_path / "d.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames or ()) == DIFF_COLUMNS
        rows = list(reader)
    assert len(rows) == d["sites"] > 0
    assert d["better"] + d["worse"] + d["same"] == d["sites"]
    assert sum(d["moves"].values()) == d["sites"]
    assert d["photos"] == len({r["name"] for r in rows})
    # an unseen site says why; a site read says nothing
    for r in rows:
        for side in ("a", "b"):
            if r[side] == "unseen":
                assert r[f"{side}_reason"] in ("covered", "hidden", "foot hidden", "steep",
                                               "close"), r
            else:
                assert r[f"{side}_reason"] == "", r
    # every change of a total is made of the listed sites' moves
    for verdict, key in (("wrong", "wrong"), ("unseen", "unseen_visible"),
                         ("hidden_read", "hidden_read")):
        into = sum(n for m, n in d["moves"].items() if m.split("->")[1] == verdict)
        out_of = sum(n for m, n in d["moves"].items() if m.split("->")[0] == verdict)
        assert b[key] - a[key] == into - out_of, verdict
    assert (tmp_path / "rows-against.csv").exists()


def test_a_config_compared_with_itself_reads_alike(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--kind", "phone", "--n", "1", "--seed", "21", "--against", "{}",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["phone"]
    assert out["differences"] == {"photos": 0, "sites": 0, "better": 0, "worse": 0,
                                  "same": 0, "moves": {}}
    assert out["against"]["wrong"] == out["wrong"]


def test_worker_processes_read_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    off = '{"sites": {"occlusion": false}}'
    out = {}
    for workers in ("1", "2"):
        assert main(["evaluate", "--kind", "mounted", "--n", "3", "--seed", "11", "--json",
                     "--against", off, "--workers", workers,
                     "--csv", str(tmp_path / f"rows{workers}.csv"),
                     "--diff", str(tmp_path / f"diff{workers}.csv")]) == 0
        out[workers] = json.loads(capsys.readouterr().out)["mounted"]
    for key in ("photos", "visible_sites", "wrong", "unseen_visible", "hidden_read", "cards",
                "cards_missed", "unresolved", "differences"):
        assert out["1"][key] == out["2"][key], key
        assert key == "differences" or out["1"]["against"][key] == out["2"]["against"][key]
    # the same rows in the same order (the timings aside)
    for name in ("rows", "diff"):
        with open(tmp_path / f"{name}1.csv", newline="", encoding="utf-8") as a, \
                open(tmp_path / f"{name}2.csv", newline="", encoding="utf-8") as b:
            ra, rb = list(csv.DictReader(a)), list(csv.DictReader(b))
        assert [{k: v for k, v in r.items() if not k.startswith("t_")} for r in ra] == [
            {k: v for k, v in r.items() if not k.startswith("t_")} for r in rb]


def test_both_kinds_read_in_one_pool_alike(capsys: pytest.CaptureFixture[str]) -> None:
    # --kind both reads its two sets in one pool of workers (kept open between them)
    out = {}
    for workers in ("1", "2"):
        assert main(["evaluate", "--kind", "both", "--n", "2", "--seed", "11", "--json",
                     "--workers", workers]) == 0
        out[workers] = json.loads(capsys.readouterr().out)
    for kind in ("mounted", "phone"):
        assert out["2"][kind]["photos"] == 2
        for key in ("visible_sites", "wrong", "unseen_visible", "hidden_read", "cards",
                    "cards_missed", "unresolved"):
            assert out["1"][kind][key] == out["2"][kind][key], (kind, key)
