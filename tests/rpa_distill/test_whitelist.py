"""The AST whitelist: generated code passes, anything outside the tiny language is rejected."""

from __future__ import annotations

import pytest
from mlx26.core.rpa_distill import distill
from mlx26.core.rpa_distill.synthetic import FAMILIES
from mlx26.core.rpa_distill.whitelist import WhitelistError, check, load

HEAD = 'TASK = "synthetic/click-button"\n\n\ndef rpa(api, fields):\n'


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_code_passes(family, oracle_demos):
    check(distill(oracle_demos[family])[0])


@pytest.mark.parametrize(("body", "needle"), [
    ("    import os\n", "Import"),
    ("    api.__class__\n", "attribute '__class__'"),
    ("    open('x')\n", "name 'open'"),
    ("    eval('1')\n", "name 'eval'"),
    ("    x = 1\n", "name 'x'"),
    ("    while True:\n        pass\n", "While"),
    ("    (lambda: 0)()\n", "may be called"),
    ("    api.click(fields.get('a'))\n", "'.get'"),
    ("    fields['a'].format()\n", "'.format'"),
    ("    for item in api.click({}):\n        pass\n", "iterate over fields"),
    ("    if fields['a']:\n        pass\n", "api.exists"),
    ("    api.click({1: 2})\n", "string constants"),
    ("    api.click(fields[0:1])\n", "subscripted"),
    ("    api.click({}, text=1)\n", "called"),
])
def test_rejected(body, needle):
    with pytest.raises(WhitelistError, match="rejected") as info:
        check(HEAD + body)
    assert needle in str(info.value)


@pytest.mark.parametrize("source", [
    "import os\n" + HEAD + "    pass\n",
    HEAD.replace("rpa(api, fields)", "rpa(api, fields, extra)") + "    pass\n",
    HEAD + "    pass\n\n\ndef other(api, fields):\n    pass\n",
    'TASK = 1\n' + HEAD.split("\n", 1)[1] + "    pass\n",
    HEAD + "    pass\nprint(1)\n",
])
def test_module_shape_rejected(source):
    with pytest.raises(WhitelistError):
        check(source)


def test_runs_without_builtins():
    calls = []

    class Api:
        def click(self, selector):
            calls.append(selector)

    task, fn = load(HEAD + '    for item in fields["xs"]:\n        api.click({"text": item.upper() + "!"})\n',
                    lambda *a: None)
    fn(Api(), {"xs": ["a", "b"]})
    assert task == "synthetic/click-button" and calls == [{"text": "A!"}, {"text": "B!"}]
