"""Start bqemulator 1.4.0 offline, with the fixes it needs on this machine.

Run with the emulator's own virtualenv (it pins DuckDB 2.x, the loader uses 1.5):
    .venv-bqemu/bin/python tests/support/bq_emulator_main.py PORT

What is patched, and why:
- start-up runs `INSTALL spatial`, a download: without network only GEOGRAPHY needs it, so a failed
  install is ignored (nothing here uses GEOGRAPHY);
- uploads: the official client sends the media part of a load job as `*/*`, which the emulator's
  whitelist refuses; accept it as the client means it (bytes in the job's sourceFormat);
- BIGNUMERIC: BigQuery's has 38 digits of scale, but sqlglot translates it to DuckDB's DECIMAL(38, 5),
  which rounds every value to 5 decimals (0.123456789 became 0.12346); translate it to DECIMAL(38, 18),
  the same fixed point the models use on DuckDB (macros/cross_db/types.sql).
"""

from __future__ import annotations

import sys

from bqemulator.api.routes import upload
from bqemulator.config import PersistenceMode, Settings
from bqemulator.server import run_forever
from bqemulator.storage import engine
from sqlglot import exp
from sqlglot.generators.duckdb import DuckDBGenerator


def _load_spatial_if_present(self) -> None:
    try:
        self._connection.execute("LOAD spatial")
    except Exception:  # noqa: BLE001 - not installed offline; GEOGRAPHY is unused
        pass


_permitted = upload._is_permitted_media_type


def _permit_any(media_type: str) -> bool:
    return media_type == "*/*" or _permitted(media_type)


def main() -> None:
    port = int(sys.argv[1])
    engine.DuckDBEngine._load_spatial = _load_spatial_if_present
    upload._is_permitted_media_type = _permit_any
    DuckDBGenerator.TYPE_PARAM_SETTINGS = {**DuckDBGenerator.TYPE_PARAM_SETTINGS,
                                           exp.DType.BIGDECIMAL: ((38, 18), (38, 38))}
    run_forever(Settings(rest_host="127.0.0.1", rest_port=port, grpc_host="127.0.0.1", grpc_port=0,
                         persistence_mode=PersistenceMode.EPHEMERAL))


if __name__ == "__main__":
    main()
