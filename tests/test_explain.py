"""`iosched explain`: an MQSim ssdconfig.xml's mapping onto the flash model, what it ignores and
what it does not model, with the reasons; errors name the file, the element and the value."""
import json

from typer.testing import CliRunner

from iosched.cli import app

runner = CliRunner()

XML = """<?xml version="1.0"?>
<Execution_Parameter_Set>
  <Host_Parameter_Set><PCIe_Lane_Bandwidth>1.0</PCIe_Lane_Bandwidth><PCIe_Lane_Count>4</PCIe_Lane_Count></Host_Parameter_Set>
  <Device_Parameter_Set>
    <Seed>1</Seed><Enabled_Preconditioning>false</Enabled_Preconditioning><Ideal_Mapping_Table>true</Ideal_Mapping_Table>
    <Data_Cache_Capacity>4194304</Data_Cache_Capacity><Overprovisioning_Ratio>0.2</Overprovisioning_Ratio>
    <GC_Exec_Threshold>0.0625</GC_Exec_Threshold><Flash_Channel_Count>2</Flash_Channel_Count><Chip_No_Per_Channel>2</Chip_No_Per_Channel>
    <Flash_Parameter_Set><Die_No_Per_Chip>2</Die_No_Per_Chip><Block_No_Per_Plane>64</Block_No_Per_Plane>
      <Page_No_Per_Block>32</Page_No_Per_Block><Page_Capacity>PAGE</Page_Capacity></Flash_Parameter_Set>
  </Device_Parameter_Set>
</Execution_Parameter_Set>
"""


def test_explain_an_mqsim_description(tmp_path):
    f = tmp_path / "ssd.xml"
    f.write_text(XML.replace("PAGE", "8192"))
    r = runner.invoke(app, ["explain", str(f), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["spec"]["geometry"]["dies_per_channel"] == 4 and doc["spec"]["geometry"]["page_kib"] == 8
    assert any(i["parameter"] == "Seed" and i["reason"] for i in doc["ignored"])
    assert any("Transaction_Scheduling_Policy" in u for u in doc["unsupported"])
    # MQSim's chips and scheduler, set by the reader: a chip's dies one command at a time, no
    # cache register, transfers of the asked sectors only, reads before programs.
    spec = doc["spec"]
    assert (spec["dies_per_chip"], spec["cache_registers"], spec["sector_transfers"]) == (2, False, True), spec
    assert spec["die_scheduling"]["read_priority"] is True, spec["die_scheduling"]
    assert any("absent" in n for n in doc["notes"])  # MQSim's defaults for the elements not given
    text = runner.invoke(app, ["explain", str(f)])
    assert text.exit_code == 0 and "parameters not modelled" in text.stdout and "2 channels x 4 dies" in text.stdout


def test_explain_names_a_bad_element_and_value(tmp_path):
    f = tmp_path / "bad.xml"
    f.write_text(XML.replace("PAGE", "6000"))
    r = runner.invoke(app, ["explain", str(f)])
    assert r.exit_code != 0
    assert "bad.xml" in r.output and "Page_Capacity" in r.output and "6000" in r.output
