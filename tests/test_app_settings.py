"""AppTest: page settings survive a visit to another page (QA s18c D3)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent
ABLATIONS = "pages/5_Ablations_and_sensitivity.py"
CERTIFICATION = "pages/6_Certification.py"


def _open(page: str, package_key: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.query_params["package"] = package_key
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _there_and_back(at: AppTest, page: str) -> None:
    at.switch_page("pages/2_Compare.py").run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]


def test_ablation_settings_are_kept_across_a_visit_to_compare() -> None:
    at = _open(ABLATIONS, "sample:veg-to-pescatarian")
    at.selectbox(key="abl_noise_mode").set_value("jitter")
    at.number_input(key="abl_noise_level").set_value(0.5)
    at.number_input(key="abl_noise_draws").set_value(5)
    at.number_input(key="abl_noise_seed").set_value(3)
    at.number_input(key="abl_k").set_value(3)
    at.multiselect(key="abl_rules").set_value([])
    at.select_slider(key="abl_time").set_value(5.0).run()
    _there_and_back(at, ABLATIONS)
    assert at.selectbox(key="abl_noise_mode").value == "jitter"
    assert at.number_input(key="abl_noise_level").value == 0.5
    assert at.number_input(key="abl_noise_draws").value == 5
    assert at.number_input(key="abl_noise_seed").value == 3
    assert at.number_input(key="abl_k").value == 3
    assert at.multiselect(key="abl_rules").value == []
    assert at.select_slider(key="abl_time").value == 5.0


def test_certification_settings_are_kept_across_a_visit_to_compare() -> None:
    at = _open(CERTIFICATION, "gen:memaudit-small:3")
    at.number_input(key="cert_time_limit").set_value(5.0)
    at.number_input(key="cert_audit_seeds").set_value(3)
    at.multiselect(key="cert_audit_pools").set_value(["full"])
    at.checkbox(key="cert_add_budget").check().run()
    _there_and_back(at, CERTIFICATION)
    assert at.number_input(key="cert_time_limit").value == 5.0
    assert at.number_input(key="cert_audit_seeds").value == 3
    assert at.multiselect(key="cert_audit_pools").value == ["full"]
    assert at.checkbox(key="cert_add_budget").value is True
