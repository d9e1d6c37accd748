"""One id, one data product: the error of a request declared twice names both models."""

from __future__ import annotations

import pytest

from dptool.dp.products import _request
from dptool.errors import DptoolError


def _member(name: str, path: str, decl: dict) -> tuple[str, dict, dict]:
    uid = f"model.shop.{name}"
    return uid, {"unique_id": uid, "name": name, "patch_path": f"shop://{path}"}, decl


def test_a_request_declared_on_two_models_names_both():
    members = [_member("dp_late__orders", "models/dptool_dp/late/_late.yml", {"id": "late", "request": "a",
                                                                             "created_by": "hybrid_search"}),
               _member("dp_late", "models/data_products/_products.yml", {"id": "late", "request": "b"})]
    with pytest.raises(DptoolError) as caught:
        _request("late", members)
    assert str(caught.value) == (
        "data product 'late' declares its request on 2 models (models/dptool_dp/late/_late.yml: "
        "model.shop.dp_late__orders and models/data_products/_products.yml: model.shop.dp_late); declare it on one "
        "(a `dptool dp create --name` that reuses a hand-made data product's id adds a second)")
