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
