view: dim_runs {
  sql_table_name: `goodput.dim_runs` ;;

  dimension: run_id {
    primary_key: yes
    description: "The run: project_id/run_name (the same name in two projects is two runs)."
    type: string
    sql: ${TABLE}.run_id ;;
  }
  dimension: run_name {
    description: "The library's run name (workload_id in Cloud Monitoring)."
    type: string
    sql: ${TABLE}.run_name ;;
  }
  dimension: project_id {
    type: string
    sql: ${TABLE}.project_id ;;
  }
  dimension: status {
    type: string
    sql: ${TABLE}.status ;;
  }
  dimension_group: first_job_start {
    type: time
    timeframes: [raw, time, date, week]
    sql: ${TABLE}.first_job_start_at ;;
  }
  dimension_group: last_loaded {
    type: time
    timeframes: [raw, time, date]
    sql: ${TABLE}.last_loaded_at ;;
  }
  measure: runs {
    type: count
  }
}
