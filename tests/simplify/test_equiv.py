"""Equivalence checker and decontamination with known pairs."""

import pytest
from mlx26.core.simplify import Decontaminator, decontaminate, equivalent, equivalent_details, parse_infix


@pytest.mark.parametrize("a, b", [
    ("x1*x2/x2", "x1"),
    ("sin(x1)**2 + cos(x1)**2", "1"),
    ("x1 + x2", "x2 + x1"),
    ("sqrt(x1**2)", "abs(x1)"),
    ("exp(x1)*exp(x2)", "exp(x1 + x2)"),
    ("c*(x1 + c)", "c*x1 + c"),  # skeletons: constants fitted both ways
    ("c*x1 + c*x1", "c*x1"),
    ("x1/c", "c*x1"),
    ("c - x1", "-(x1 + c)"),
])
def test_equivalent_pairs(a, b):
    assert equivalent(a, b)
    assert equivalent(b, a)


@pytest.mark.parametrize("a, b", [
    ("x1", "x1 + 1e-3"),
    ("sin(x1)", "cos(x1)"),
    ("exp(log(x1))", "x1"),  # different domains
    ("sqrt(x1**2)", "x1"),
    ("c*x1", "x1"),  # x1 cannot reproduce c*x1
    ("c*x1 + c", "c*(x1 + 1)"),  # two free constants vs one
    ("exp(x1 + c)", "c*exp(x1)"),  # c*exp(x1) < 0 is out of reach of exp(x1 + c)
    ("x1*x2", "x3*x4"),  # different variables unless renaming is allowed
])
def test_non_equivalent_pairs(a, b):
    assert not equivalent(a, b)


def test_domain_intersection_and_renaming():
    assert equivalent("exp(log(x1))", "x1", domain="intersection")
    assert equivalent("x1*x2", "x3*x4", allow_renaming=True)
    assert equivalent("x1 - x2", "x3 - x1", allow_renaming=True)
    assert not equivalent("x1 - x2", "x2 + x1", allow_renaming=True)
    d = equivalent_details("x1/x2", "x2/x3", allow_renaming=True)
    assert d["equivalent"] and d["mapping"] == {"x2": "x1", "x3": "x2"}
    assert equivalent(parse_infix("x1*x2/x2"), ["x1"])


def test_decontaminate_drops_equivalent_training_rows():
    test = ["x1 + x2", "2*x1*x2", "x1*3.7 + c", "sin(x1)", {"id": 1, "prefix": ["exp", "x1"]}]
    train = [
        "x2 + x1",            # same skeleton
        "x2*x3 + x3*x2",      # 2*x*y skeleton after renaming
        "sin(x5)",            # renamed variable
        "x1*1.5 + 2",         # same skeleton after masking constants
        {"id": "a", "expr": "exp(x1)*1"},
        "cos(x1)",            # kept
        "x1 + x2 + x3",       # kept
        "exp(log(x1))",       # kept in sound mode (not equal to x1 everywhere)
        "1/0",                # unparsable rows are kept and counted
    ]
    kept, stats = decontaminate(iter(train), iter(test))
    kept = list(kept)
    assert kept == ["cos(x1)", "x1 + x2 + x3", "exp(log(x1))", "1/0"]
    assert stats["train"] == 9 and stats["dropped"] == 5 and stats["kept"] == 4
    assert stats["train_errors"] == 1 and stats["test"] == 5


def test_decontaminate_functional_image():
    # same function, different skeletons: caught by the functional image
    d = Decontaminator(["x1**2 - 1"])
    kept = list(d.filter(["(x1 - 1)*(x1 + 1)", "x1**2 + 1"]))
    assert kept == ["x1**2 + 1"]
    assert d.stats["dropped_image"] == 1


def test_decontaminate_streams_many_rows():
    d = Decontaminator(["x1*x2"])
    gen = d.filter(f"x1*x2 + {i}" if i % 2 else "x2*x1" for i in range(2000))
    kept = sum(1 for _ in gen)
    assert kept == 1000 and d.stats["dropped"] == 1000


def test_rename_tries_permutations_when_names_agree():
    d = equivalent_details("x1/x2", "x2/x1", allow_renaming=True)
    assert d["equivalent"] and d["mapping"] == {"x1": "x2", "x2": "x1"}
    assert not equivalent("x1/x2", "x2/x1")
    assert not equivalent("x1 - x2", "x1 + x2", allow_renaming=True)


def test_rename_matches_by_signature_beyond_six_variables():
    names = [f"x{i}" for i in range(1, 10)]
    a = " + ".join(f"{k}*{v}" for k, v in enumerate(names, 1)) + " + sin(x1*x2)"
    perm = names[::-1]
    b = " + ".join(f"{k}*{perm[k - 1]}" for k in range(1, 10)) + f" + sin({perm[0]}*{perm[1]})"
    d = equivalent_details(a, b, allow_renaming=True)
    assert d["equivalent"] and d["mappings_tried"] == 1
    assert not equivalent(a, b.replace("sin", "cos"), allow_renaming=True)


def test_strict_equivalence_rechecks_overflow_in_high_precision():
    # exp(exp(x)) overflows float64 for x > ~6.5; at 80 digits the ratio is e everywhere
    d = equivalent_details("exp(exp(x1))/exp(exp(x1) - 1)", "e")
    assert d["equivalent"], d
    assert not equivalent("log(x1)", "x1")  # a real domain difference stays one
    assert not equivalent("exp(log(x1))", "x1")


def test_canonical_decontamination_renaming_constants_order():
    test = ["2*sin(x1)*cos(x2)", "x1**4 - x1**3 + x2**2/2 - x2", "x1 + x2*exp(x3)"]
    d = Decontaminator(test)
    same = ["cos(x1)*3.7*sin(x3)", "x3**2/3.1 - x3 + x2**4 - x2**3", "x2*exp(x1) + x3",
            "0.5*(2*x1**4 + x2**2 - 2*x1**3 - 2*x2)"]
    assert list(d.filter(same)) == []
    other = ["2*sin(x1)*sin(x2)", "x1**4 - x1**3 + x2**2/2 + x2", "x1 + x2*exp(x2)", "sin(x1)", "x1*x2*exp(x3)"]
    assert list(d.filter(other)) == other
    # first-pass keys (first-appearance renaming) for comparison
    old = Decontaminator(test, canonical=False)
    assert len(list(old.filter(same))) >= 1


def test_affine_image_only_for_free_scale_and_offset():
    d = Decontaminator(["c*sin(x1) + c"])
    assert list(d.filter(["sin(x1)", "c*sin(x1) + c*sin(x1)**0 + c"])) == ["sin(x1)"]
    d2 = Decontaminator(["x1**2 - 1"])
    assert list(d2.filter(["x1**2 + 1", "(x1 - 1)*(x1 + 1)"])) == ["x1**2 + 1"]


def test_cancel_normalisation_option():
    pytest.importorskip("sympy")
    test = ["x1 + 1"]
    row = "(x1**2 - 1)/(x1 - 1)"
    assert list(Decontaminator(test, use_image=False).filter([row])) == [row]
    assert list(Decontaminator(test, use_image=False, cancel=True).filter([row])) == []
