- dashboard: goodput
  title: "Goodput"
  description: "The fleet's Goodput and where its time went, the worst runs, and one run's rolling Goodput."
  layout: newspaper
  preferred_viewer: dashboards-next
  refresh: 1 hour
  filters:
  - name: days
    title: "Days"
    type: field_filter
    default_value: "7 days"
    model: goodput
    explore: fct_goodput_fleet_daily
    field: fct_goodput_fleet_daily.day_date
  - name: run
    title: "Run"
    type: field_filter
    default_value: ""
    model: goodput
    explore: fct_goodput_rolling
    field: fct_goodput_rolling.run_name

  elements:
  - name: fleet_goodput
    title: "Fleet Goodput"
    note_text: "Productive over elapsed time of every valid run over the days selected."
    model: goodput
    explore: fct_goodput_fleet_daily
    type: single_value
    fields: [fct_goodput_fleet_daily.goodput_pct]
    listen:
      days: fct_goodput_fleet_daily.day_date
    row: 0
    col: 0
    width: 6
    height: 4

  - name: fleet_goodput_by_day
    title: "Fleet Goodput by day"
    model: goodput
    explore: fct_goodput_fleet_daily
    type: looker_line
    fields: [fct_goodput_fleet_daily.day_date, fct_goodput_fleet_daily.goodput_pct, fct_goodput_fleet_daily.runs]
    sorts: [fct_goodput_fleet_daily.day_date]
    listen:
      days: fct_goodput_fleet_daily.day_date
    row: 0
    col: 6
    width: 18
    height: 6

  - name: badput_share
    title: "Where the fleet's time went"
    note_text: "Each Badput bucket's share of the fleet's elapsed time over the days selected."
    model: goodput
    explore: fct_badput_fleet_daily
    type: looker_bar
    fields: [fct_badput_fleet_daily.gcm_badput_source, fct_badput_fleet_daily.badput_share_pct]
    sorts: [fct_badput_fleet_daily.badput_share_pct desc]
    listen:
      days: fct_badput_fleet_daily.day_date
    row: 6
    col: 0
    width: 12
    height: 8

  - name: worst_runs
    title: "Worst runs"
    note_text: "Lowest cumulative Goodput first; running and stalled runs marked."
    model: goodput
    explore: runs
    type: looker_grid
    fields: [fct_goodput_cumulative.run_name, fct_goodput_cumulative.goodput_pct, fct_goodput_cumulative.is_running,
      fct_goodput_cumulative.is_stalled, fct_goodput_cumulative.disruptions]
    sorts: [fct_goodput_cumulative.goodput_pct]
    limit: 10
    row: 6
    col: 12
    width: 12
    height: 8

  - name: run_rolling_goodput
    title: "Rolling Goodput of a run"
    note_text: "Pick a run in the Run filter: its 1 h windows, as the library's monitor reports them."
    model: goodput
    explore: fct_goodput_rolling
    type: looker_line
    fields: [fct_goodput_rolling.window_end_time, fct_goodput_rolling.goodput_pct]
    sorts: [fct_goodput_rolling.window_end_time]
    filters:
      fct_goodput_rolling.window_size: "1h"
    listen:
      run: fct_goodput_rolling.run_name
    row: 14
    col: 0
    width: 24
    height: 8

  - name: disruptions
    title: "Disruptions"
    model: goodput
    explore: fct_disruptions
    type: looker_grid
    fields: [fct_disruptions.run_name, fct_disruptions.disruptions, fct_disruptions.wasted_seconds,
      fct_disruptions.infrastructure_recovery_seconds]
    sorts: [fct_disruptions.wasted_seconds desc]
    limit: 20
    row: 22
    col: 0
    width: 24
    height: 6
