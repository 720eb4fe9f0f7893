# Looker model over the goodput-warehouse marts (BigQuery).
# Set `connection` to your Looker connection for the dataset dbt builds into
# (profiles.yml: GOODPUT_BQ_DATASET, default `goodput`), and the sql_table_name
# prefix in views/*.view.lkml if that dataset is not `goodput`.

connection: "goodput_bigquery"

include: "/views/*.view.lkml"
include: "/dashboards/*.dashboard.lookml"

# Cached results last until the next dbt build: every build records its nodes' outcomes in
# goodput_build_results (macros/incremental/build_results.sql), so a new finished_at means new marts.
datagroup: goodput_build {
  sql_trigger: select max(finished_at) from `goodput.goodput_build_results` ;;
  max_cache_age: "24 hours"
  description: "A dbt build of the goodput marts finished."
}

persist_with: goodput_build

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

explore: fct_goodput_fleet_daily {
  label: "Fleet by day"
  description: "The fleet's Goodput per UTC day (runs with a valid Goodput), time weighted."
}

explore: fct_badput_fleet_daily {
  label: "Fleet Badput by day"
  description: "Where the fleet's time went per UTC day and Badput bucket."
}

explore: fct_steps {
  label: "Steps"
  description: "Every step of every run: its time, how the library counts it, its deviation from the ideal step time."

  join: dim_runs {
    type: left_outer
    relationship: many_to_one
    sql_on: ${dim_runs.run_id} = ${fct_steps.run_id} ;;
  }
}

explore: fct_disruptions {
  label: "Disruptions"
  description: "Every restart: when, from which step, the progress redone and the recovery time."

  join: dim_runs {
    type: left_outer
    relationship: many_to_one
    sql_on: ${dim_runs.run_id} = ${fct_disruptions.run_id} ;;
  }
}
