{#
  Goodput of one run over an arbitrary interval, for `dbt compile` / `dbt show`:
      dbt show -s goodput_interval --vars '{interval_run: my-run, interval_start: "2026-12-01T00:00:00Z", interval_end: "2026-12-01T06:00:00Z"}'
  (goodput-loader interval does the same from the command line.)
#}

{{ goodput_interval(var('interval_run', ''), var('interval_start', '1970-01-01T00:00:00Z'), var('interval_end', '1970-01-01T00:00:00Z')) }}
