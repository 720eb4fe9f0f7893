# Looker model over the goodput-warehouse marts (BigQuery).
# Set `connection` to your Looker connection for the dataset dbt builds into
# (profiles.yml: GOODPUT_BQ_DATASET, default `goodput`), and the sql_table_name
# prefix in views/*.view.lkml if that dataset is not `goodput`.

connection: "goodput_bigquery"

include: "/views/*.view.lkml"

explore: runs {
  label: "Goodput runs"
  description: "Cumulative Goodput and Badput per run, with the rolling history of each window size."
  from: dim_runs
  view_name: dim_runs

  join: fct_goodput_cumulative {
    type: left_outer
    relationship: one_to_one
    sql_on: ${fct_goodput_cumulative.run_id} = ${dim_runs.run_id} ;;
  }

  join: fct_badput_breakdown {
    type: left_outer
    relationship: one_to_many
    sql_on: ${fct_badput_breakdown.run_id} = ${dim_runs.run_id} ;;
  }
}

explore: fct_goodput_rolling {
  label: "Rolling Goodput"
  description: "One row per run, window size and window end: plot goodput_pct over window_end_time."
  always_filter: {
    filters: [fct_goodput_rolling.window_size: "1h"]
  }

  join: fct_badput_rolling {
    type: left_outer
    relationship: one_to_many
    sql_on: ${fct_badput_rolling.run_id} = ${fct_goodput_rolling.run_id}
      and ${fct_badput_rolling.window_seconds} = ${fct_goodput_rolling.window_seconds}
      and ${fct_badput_rolling.window_end_epoch} = ${fct_goodput_rolling.window_end_epoch} ;;
  }

  join: dim_runs {
    type: left_outer
    relationship: many_to_one
    sql_on: ${dim_runs.run_id} = ${fct_goodput_rolling.run_id} ;;
  }
}
