view: fct_goodput_cumulative {
  sql_table_name: `goodput.fct_goodput_cumulative` ;;

  dimension: run_id {
    primary_key: yes
    description: "The run: project_id/run_name (the same name in two projects is two runs)."
    type: string
    sql: ${TABLE}.run_id ;;
  }
  dimension: project_id {
    type: string
    sql: ${TABLE}.project_id ;;
  }
  dimension: run_name {
    description: "The library's run name (workload_id in Cloud Monitoring)."
    type: string
    sql: ${TABLE}.run_name ;;
  }
  dimension: is_running {
    type: yesno
    sql: ${TABLE}.is_running ;;
  }
  dimension: is_stalled {
    description: "No job end and nothing logged for goodput_stall_seconds: probably hung or killed."
    type: yesno
    sql: ${TABLE}.is_stalled ;;
  }
  dimension: goodput_pct {
    description: "The library's get_job_goodput() for this run."
    type: number
    value_format_name: decimal_2
    sql: ${TABLE}.goodput_pct ;;
  }
  dimension: max_productive_step {
    type: number
    sql: ${TABLE}.max_productive_step ;;
  }
  dimension: disruptions {
    type: number
    sql: ${TABLE}.disruptions ;;
  }
  dimension: is_elastic {
    description: "An elastic (Pathways) job: computed as ElasticGoodputCalculator, with the ELASTIC_* Badput buckets."
    type: yesno
    sql: ${TABLE}.is_elastic ;;
  }
  dimension: stepping_slice_efficiency {
    description: "Elastic runs: time-weighted share of slices stepping over the job (the library's; 0 slices before the first slice-count record)."
    type: number
    value_format_name: decimal_3
    sql: ${TABLE}.stepping_slice_efficiency ;;
  }
  dimension: available_slice_efficiency {
    description: "Elastic runs: time-weighted share of slices available over the job (the library's)."
    type: number
    value_format_name: decimal_3
    sql: ${TABLE}.available_slice_efficiency ;;
  }
  dimension: stepping_slice_efficiency_observed {
    description: "As stepping_slice_efficiency, over the time slice counts were known only (not a library figure)."
    type: number
    value_format_name: decimal_3
    sql: ${TABLE}.stepping_slice_efficiency_observed ;;
  }
  dimension: available_slice_efficiency_observed {
    description: "As available_slice_efficiency, over the time slice counts were known only (not a library figure)."
    type: number
    value_format_name: decimal_3
    sql: ${TABLE}.available_slice_efficiency_observed ;;
  }
  dimension: goodput_pct_net_of_elastic {
    description: "Elastic runs: Goodput without the productive time under way during waits and re-initialisation, which the library counts as productive and as Badput (not a library figure)."
    type: number
    value_format_name: decimal_2
    sql: ${TABLE}.goodput_pct_net_of_elastic ;;
  }
  dimension: elastic_slice_down_unnamed_seconds {
    description: "Elastic runs: the part of ELASTIC_SLICE_DOWN from waits whose type does not say slice_down (not a library figure)."
    type: number
    sql: ${TABLE}.elastic_slice_down_unnamed_seconds ;;
  }
  measure: total_elapsed_seconds {
    type: sum
    sql: ${TABLE}.total_elapsed_seconds ;;
  }
  measure: productive_seconds {
    type: sum
    sql: ${TABLE}.productive_seconds ;;
  }
  measure: fleet_goodput_pct {
    description: "Productive over elapsed time of every run selected (a time-weighted Goodput, not a mean of percentages)."
    type: number
    value_format_name: decimal_2
    sql: 100 * ${productive_seconds} / nullif(${total_elapsed_seconds}, 0) ;;
    drill_fields: [run_name, goodput_pct, is_running, is_stalled, disruptions]
  }
  measure: total_disruptions {
    type: sum
    sql: ${TABLE}.disruptions ;;
  }
}
