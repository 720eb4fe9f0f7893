"""BigQuery, for fleets that outgrow one machine: everything the loader does with it.

* ``BigQuerySink`` writes the raw layer into PROJECT.DATASET;
* ``BigQueryMarts`` reads the marts dbt builds there, for ``push``, and keeps
  its state in the dataset's ``push_state`` table;
* ``make_client``, ``parse_dataset``, ``explain`` and ``literal`` are what
  both need: a client, the --bigquery value, errors a user can act on, and
  values spelled into scripts (query parameters do not reach a script's
  statements).

The sink keeps the DuckDB sink's contract (see ``sinks/base.py``) with
BigQuery's tools: each batch is one NDJSON load job into a staging table of
its own, then one transaction MERGEs it into ``log_entries`` on ``(log_name,
timestamp, insert_id)``, inserts its rejections and moves the source's cursor
in ``load_state``, and drops the staging table. A retried or re-run batch
merges nothing twice, and a batch that fails before COMMIT leaves the dataset
as it was (the staging table expires by itself within a day if even the
cleanup failed).

Load jobs, not streaming inserts: they are free, keep no streaming buffer
that MERGE cannot touch, and a whole batch either loads or does not.

google-cloud-bigquery is an extra: it is imported where it is used, so this
module imports without it and ``require`` names the extra to install.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import uuid
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from goodput_loader.entries import Rejection, format_rfc3339_us
from goodput_loader.errors import LoaderError, SinkError
from goodput_loader.sinks.base import Batch, BatchResult, Cursor
from goodput_loader.warehouses.marts import FAILED_NODES_SQL, as_utc

if TYPE_CHECKING:
    from goodput_loader.push.series import Point

STAGING_EXPIRY = dt.timedelta(days=1)
_ENTRY_COLUMNS = ("log_name, run_name, insert_id, `timestamp`, receive_timestamp, severity, payload, "
                  "job_name_matches, source, loaded_at")


def _schema() -> dict[str, list[Any]]:
    from google.cloud.bigquery import SchemaField as F

    return {
        "log_entries": [
            F("log_name", "STRING", "REQUIRED"), F("run_name", "STRING", "REQUIRED"),
            F("insert_id", "STRING", "REQUIRED"), F("timestamp", "TIMESTAMP", "REQUIRED"),
            F("receive_timestamp", "TIMESTAMP"), F("severity", "STRING", "REQUIRED"),
            F("payload", "JSON", "REQUIRED"), F("job_name_matches", "BOOL", "REQUIRED"),
            F("source", "STRING", "REQUIRED"), F("loaded_at", "TIMESTAMP", "REQUIRED"),
        ],
        "rejected_entries": [
            F("source", "STRING", "REQUIRED"), F("location", "STRING", "REQUIRED"),
            F("reason", "STRING", "REQUIRED"), F("raw", "STRING"), F("rejected_at", "TIMESTAMP", "REQUIRED"),
        ],
        "load_state": [
            F("source_key", "STRING", "REQUIRED"), F("cursor_timestamp", "TIMESTAMP"),
            F("cursor_insert_id", "STRING"), F("cursor_offset", "INT64"), F("fingerprint", "STRING"),
            F("entries_landed", "INT64", "REQUIRED"), F("updated_at", "TIMESTAMP", "REQUIRED"),
        ],
    }


def literal(value: str | int | None) -> str:
    """A BigQuery literal: JSON's string escapes are all valid BigQuery escapes.

    For values written into a script's text: BigQuery passes query
    parameters to a single statement only, not to the statements of a script.
    """
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(int(value))
    return json.dumps(value)


def parse_dataset(spec: str) -> tuple[str, str]:
    """PROJECT.DATASET -> (project, dataset), with a message a user can act on."""
    project, sep, dataset = spec.partition(".")
    if not sep or not project or not dataset or "." in dataset:
        raise SinkError(f"--bigquery {spec!r}: expected PROJECT.DATASET, e.g. my-project.goodput_raw")
    return project, dataset


def explain(exc: Exception, dataset: str) -> str:
    """Turn a Google API error into what to do about it."""
    from google.api_core import exceptions as gexc

    if isinstance(exc, gexc.NotFound):
        return (f"{exc.message if hasattr(exc, 'message') else exc}: create the dataset first "
                f"(`bq mk --dataset {dataset.replace('.', ':', 1)}`) or check --bigquery")
    if isinstance(exc, gexc.Forbidden):
        text = str(exc)
        if "quota" in text.lower() or "rateLimitExceeded" in text:
            return f"BigQuery quota exceeded ({text}); retry later or load larger batches (--batch-size)"
        return (f"permission denied on {dataset} ({text}): the account needs roles/bigquery.dataEditor "
                "on the dataset and roles/bigquery.jobUser on the project")
    if isinstance(exc, gexc.TooManyRequests):
        return f"BigQuery quota exceeded ({exc}); retry later or load larger batches (--batch-size)"
    return str(exc)


def make_client(project: str, endpoint: str | None = None, location: str | None = None) -> Any:
    """A BigQuery client: application default credentials, or anonymous against a local endpoint."""
    from goodput_loader.extras import require

    bigquery = require("google.cloud.bigquery", "bigquery", "BigQuery (--bigquery)")

    if endpoint:
        from google.auth.credentials import AnonymousCredentials

        return bigquery.Client(project=project, credentials=AnonymousCredentials(), location=location,
                               client_options={"api_endpoint": endpoint})
    try:
        return bigquery.Client(project=project, location=location)
    except Exception as exc:  # google.auth.exceptions.DefaultCredentialsError and friends
        raise SinkError(f"cannot create a BigQuery client for {project}: {exc}. "
                        "Run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS") from exc


# ------------------------------------------------------------------ writing the raw layer
class BigQuerySink:
    """Writes the raw layer into PROJECT.DATASET (tables created if missing)."""

    def __init__(self, spec: str, endpoint: str | None = None, location: str | None = None,
                 client: Any = None):
        from google.api_core import exceptions as gexc

        from goodput_loader.extras import require

        bigquery = require("google.cloud.bigquery", "bigquery", "BigQuery (--bigquery)")
        self.project, self.dataset = parse_dataset(spec)
        self.spec = f"{self.project}.{self.dataset}"
        self._bigquery = bigquery
        self._client = client or make_client(self.project, endpoint, location)
        try:
            self._client.get_dataset(self.spec)
            for name, schema in _schema().items():
                table = bigquery.Table(f"{self.spec}.{name}", schema=schema)
                if name == "log_entries":
                    table.time_partitioning = bigquery.TimePartitioning(field="timestamp")
                    table.clustering_fields = ["log_name"]
                self._client.create_table(table, exists_ok=True)
        except gexc.GoogleAPIError as exc:
            raise SinkError(f"cannot prepare {self.spec}: {explain(exc, self.spec)}") from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        config = self._bigquery.QueryJobConfig(query_parameters=list(params))
        return list(self._client.query(sql, job_config=config).result())

    def get_cursor(self, source_key: str) -> Cursor | None:
        from google.api_core import exceptions as gexc

        param = self._bigquery.ScalarQueryParameter("key", "STRING", source_key)
        try:
            rows = self._query(
                f"""select unix_micros(cursor_timestamp) as ts, cursor_insert_id, cursor_offset, fingerprint,
                           entries_landed
                    from `{self.spec}.load_state` where source_key = @key""",
                [param],
            )
        except gexc.GoogleAPIError as exc:
            raise SinkError(f"cannot read the load cursor from {self.spec}: {explain(exc, self.spec)}") from exc
        if not rows:
            return None
        row = rows[0]
        return Cursor(source_key=source_key, timestamp_us=row[0], insert_id=row[1], offset=row[2],
                      fingerprint=row[3], entries_landed=row[4])

    def _stage(self, entries: list[dict[str, Any]], rejections: Sequence[Rejection], source: str,
               now: str) -> str:
        """Load the batch into a new staging table (one load job); return its id."""
        bigquery = self._bigquery
        staging = f"{self.spec}._staging_{uuid.uuid4().hex}"
        schema = [bigquery.SchemaField("kind", "STRING", "REQUIRED"), *_schema()["log_entries"],
                  bigquery.SchemaField("location", "STRING"), bigquery.SchemaField("reason", "STRING"),
                  bigquery.SchemaField("raw", "STRING")]
        schema = [bigquery.SchemaField(f.name, f.field_type, "NULLABLE") for f in schema]
        table = bigquery.Table(staging, schema=schema)
        table.expires = dt.datetime.now(dt.timezone.utc) + STAGING_EXPIRY
        self._client.create_table(table)
        rows: list[dict[str, Any]] = [
            {"kind": "entry", "log_name": e["log_name"], "run_name": e["run_name"], "insert_id": e["insert_id"],
             "timestamp": format_rfc3339_us(e["timestamp_us"]),
             "receive_timestamp": None if e["receive_timestamp_us"] is None
             else format_rfc3339_us(e["receive_timestamp_us"]),
             "severity": e["severity"], "payload": json.loads(e["payload"]),
             "job_name_matches": e["job_name_matches"], "source": source, "loaded_at": now}
            for e in entries
        ]
        rows += [{"kind": "rejection", "source": source, "location": r.location, "reason": r.reason,
                  "raw": r.raw} for r in rejections]
        job = self._client.load_table_from_json(
            rows, staging, job_config=bigquery.LoadJobConfig(schema=schema, write_disposition="WRITE_APPEND"))
        job.result()
        return staging

    def write_batch(self, source: str, batch: Batch) -> BatchResult:
        from google.api_core import exceptions as gexc

        entries = batch.table().to_pylist()
        rejections, cursor = batch.rejections, batch.cursor
        bigquery = self._bigquery
        now = format_rfc3339_us(int(dt.datetime.now(dt.timezone.utc).timestamp() * 1_000_000))
        staging = None
        try:
            before = self._count_entries()
            statements = []
            if batch.retract:
                locations = ", ".join(literal(location) for location in batch.retract)
                statements.append(f"""
                    delete from `{self.spec}.rejected_entries`
                    where source = {literal(source)} and location in ({locations});""")
            if entries or rejections:
                staging = self._stage(entries, rejections, source, now)
                statements.append(f"""
                    merge `{self.spec}.log_entries` as target
                    using (
                        select {_ENTRY_COLUMNS} from `{staging}` where kind = 'entry'
                        qualify row_number() over (partition by log_name, `timestamp`, insert_id) = 1
                    ) as batch
                    on target.log_name = batch.log_name
                        and target.`timestamp` = batch.`timestamp`
                        and target.insert_id = batch.insert_id
                    when not matched then insert ({_ENTRY_COLUMNS})
                        values ({', '.join('batch.' + c for c in _ENTRY_COLUMNS.split(', '))});
                    merge `{self.spec}.rejected_entries` as target
                    using (
                        select source, location, any_value(reason) as reason, any_value(raw) as raw
                        from `{staging}` where kind = 'rejection' group by source, location
                    ) as batch
                    on target.source = batch.source and target.location = batch.location
                    when not matched then insert (source, location, reason, raw, rejected_at)
                        values (batch.source, batch.location, batch.reason, batch.raw, timestamp '{now}');""")
            if cursor is not None:
                # literals, not query parameters: parameters do not reach the statements of a script
                ts = "null" if cursor.timestamp_us is None else f"timestamp_micros({int(cursor.timestamp_us)})"
                values = (f"{literal(cursor.source_key)}, {ts}, {literal(cursor.insert_id)}, "
                          f"{literal(cursor.offset)}, {literal(cursor.fingerprint)}")
                statements.append(f"""
                    merge `{self.spec}.load_state` as target
                    using (select 1 as one) as batch
                    on target.source_key = {literal(cursor.source_key)}
                    when matched then update set
                        cursor_timestamp = {ts}, cursor_insert_id = {literal(cursor.insert_id)},
                        cursor_offset = {literal(cursor.offset)}, fingerprint = {literal(cursor.fingerprint)},
                        updated_at = timestamp '{now}'
                    when not matched then insert
                        (source_key, cursor_timestamp, cursor_insert_id, cursor_offset, fingerprint,
                         entries_landed, updated_at)
                        values ({values}, 0, timestamp '{now}');""")
            if statements:
                script = "begin transaction;\n" + "\n".join(statements) + "\ncommit transaction;"
                self._query(script)
            inserted = self._count_entries() - before
            if cursor is not None and inserted:
                self._query(
                    f"update `{self.spec}.load_state` set entries_landed = entries_landed + @n "
                    "where source_key = @key",
                    [bigquery.ScalarQueryParameter("n", "INT64", inserted),
                     bigquery.ScalarQueryParameter("key", "STRING", cursor.source_key)])
        except gexc.GoogleAPIError as exc:
            raise SinkError(f"writing a batch to {self.spec} failed and was not committed: "
                            f"{explain(exc, self.spec)}") from exc
        finally:
            if staging is not None:
                try:
                    self._client.delete_table(staging, not_found_ok=True)
                except gexc.GoogleAPIError:
                    pass  # it expires by itself
        return BatchResult(inserted=inserted, duplicates=len(entries) - inserted, rejected=len(rejections))

    def _count_entries(self) -> int:
        return self._query(f"select count(*) from `{self.spec}.log_entries`")[0][0]

    def close(self) -> None:
        self._client.close()


# ------------------------------------------------------------------ reading the marts
class BigQueryMarts:
    """Marts in the BigQuery dataset dbt builds into; the push state is its push_state table."""

    def __init__(self, spec: str, endpoint: str | None, read_only: bool):
        self.project, self.dataset = parse_dataset(spec)
        self.client = make_client(self.project, endpoint)
        self.state = f"{self.project}.{self.dataset}.push_state"
        self.read_only = read_only

    def rows(self, sql: str, runs: list[str], times: dict[str, dt.datetime] | None = None,
             read_from: dict[str, dt.datetime] | None = None) -> list[dict[str, Any]]:
        from google.api_core import exceptions as gexc
        from google.cloud import bigquery

        params: list[Any] = [bigquery.ArrayQueryParameter("runs", "STRING", runs)]
        sql = sql.replace("{runs}", "unnest(@runs)").replace("{t}", f"`{self.project}.{self.dataset}`.")
        if "{read_from}" in sql:
            read_from = read_from or {}
            params += [bigquery.ArrayQueryParameter("read_from_runs", "STRING", list(read_from)),
                       bigquery.ArrayQueryParameter("read_from_times", "TIMESTAMP", list(read_from.values()))]
            # the two arrays joined by position (an array parameter indexed by offset reads wrong in the emulator)
            sql = sql.replace("{read_from}", "(select run_id, read_from from unnest(@read_from_runs) as run_id "
                              "with offset i join unnest(@read_from_times) as read_from with offset j on i = j)")
        for name, value in (times or {}).items():
            params.append(bigquery.ScalarQueryParameter(name, "TIMESTAMP", value))
            sql = sql.replace("{%s}" % name, f"@{name}")
        try:
            result = self.client.query(sql, job_config=bigquery.QueryJobConfig(query_parameters=params)).result()
        except gexc.NotFound as exc:
            raise LoaderError(f"the marts are not built in {self.project}.{self.dataset} ({exc.message}); "
                              "run `dbt build` with the bigquery target first") from exc
        return [{k: as_utc(v) if isinstance(v, dt.datetime) else v for k, v in row.items()} for row in result]

    def failed_nodes(self) -> list[dict[str, Any]]:
        from google.api_core import exceptions as gexc

        try:
            return self.rows(FAILED_NODES_SQL, [])
        except LoaderError as exc:
            if isinstance(exc.__cause__, gexc.NotFound):  # built before outcomes were kept
                return []
            raise

    def pushed(self) -> dict[str, dt.datetime]:
        from google.api_core import exceptions as gexc
        from google.cloud import bigquery

        if not self.read_only:
            schema = [bigquery.SchemaField("series_id", "STRING", "REQUIRED"),
                      bigquery.SchemaField("metric_type", "STRING", "REQUIRED"),
                      bigquery.SchemaField("last_end_time", "TIMESTAMP", "REQUIRED"),
                      bigquery.SchemaField("updated_at", "TIMESTAMP", "REQUIRED")]
            self.client.create_table(bigquery.Table(self.state, schema=schema), exists_ok=True)
        try:
            rows = self.client.query(f"select series_id, last_end_time from `{self.state}`").result()
        except gexc.NotFound:  # a dry run before the first push
            return {}
        return {row[0]: as_utc(row[1]) for row in rows}

    def record(self, written: list[Point]) -> None:
        if not written:
            return
        pushed = ", ".join(
            f"struct({literal(p.series.id)} as series_id, {literal(p.series.metric_type)} as metric_type, "
            f"timestamp_micros({int(p.end_time.timestamp() * 1_000_000)}) as last_end_time)" for p in written)
        self.client.query(f"""
            merge `{self.state}` as target
            using (select * from unnest([{pushed}])) as pushed
            on target.series_id = pushed.series_id
            when matched then update set
                last_end_time = greatest(target.last_end_time, pushed.last_end_time),
                updated_at = current_timestamp()
            when not matched then insert (series_id, metric_type, last_end_time, updated_at)
                values (pushed.series_id, pushed.metric_type, pushed.last_end_time, current_timestamp())""").result()

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Nothing to hand over: BigQuery has no file lock."""
        yield

    def close(self) -> None:
        self.client.close()
