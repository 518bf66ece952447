"""Timing hooks for ``bench/exp_compare_timeline.py``, loaded by the Streamlit server it starts
(this folder goes first on the server's PYTHONPATH, and only there).

With ``MA_PROBE_LOG`` set: one JSON line per script run (wall start / end, CPU seconds) in that
file, and one line per message sent to the browser (time, bytes, message or element type) in
``MA_PROBE_LOG.send``. Nothing else changes.
"""

import json
import os
import time

_LOG = os.environ.get("MA_PROBE_LOG")

if _LOG:
    from streamlit.runtime.scriptrunner import script_runner as _runner
    from streamlit.web.server.starlette import starlette_websocket as _socket

    _run_script = _runner.ScriptRunner._run_script
    _serialize = _socket.serialize_forward_msg

    def _timed_run(self, rerun_data):
        start, cpu = time.time(), time.process_time()
        try:
            return _run_script(self, rerun_data)
        finally:
            with open(_LOG, "a") as f:
                line = {"start": start, "end": time.time(), "cpu": time.process_time() - cpu}
                f.write(json.dumps(line) + "\n")

    def _kind(msg) -> str:
        kind = msg.WhichOneof("type")
        if kind != "delta":
            return kind
        delta = msg.delta.WhichOneof("type")
        if delta == "new_element":
            return "element:" + msg.delta.new_element.WhichOneof("type")
        if delta == "add_block":
            return "block:" + str(msg.delta.add_block.WhichOneof("type"))
        return str(delta)

    def _timed_serialize(msg):
        payload = _serialize(msg)
        with open(_LOG + ".send", "a") as f:
            f.write(f"{time.time()} {len(payload)} {_kind(msg)}\n")
        return payload

    _runner.ScriptRunner._run_script = _timed_run
    _socket.serialize_forward_msg = _timed_serialize
