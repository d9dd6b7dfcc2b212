# SPDX-License-Identifier: MIT
import os

import pytest

# the sim card, and no silent CPU fallback: an op without a card kernel fails
os.environ.setdefault("SPYRE_BACKEND", "sim")
os.environ["TORCH_SPYRE_FALLBACK"] = "error"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from vllm_spyre_plugin.tiny_model import build

    return build(str(tmp_path_factory.mktemp("tinygpt")))
