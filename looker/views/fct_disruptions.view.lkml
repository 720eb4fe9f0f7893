view: fct_disruptions {
  sql_table_name: `goodput.fct_disruptions` ;;

  dimension: key {
    primary_key: yes
    hidden: yes
    sql: concat(${TABLE}.run_id, '/', cast(${TABLE}.disruption_no as string)) ;;
  }
  dimension: run_id {
    hidden: yes
    type: string
    sql: ${TABLE}.run_id ;;
  }
  dimension: run_name {
    type: string
    sql: ${TABLE}.run_name ;;
  }
  dimension: disruption_no {
    type: number
    sql: ${TABLE}.disruption_no ;;
  }
  dimension_group: last_step_start {
    description: "The last step before the disruption."
    type: time
    timeframes: [raw, time, date]
    sql: ${TABLE}.last_step_start_at ;;
  }
  dimension_group: resumed {
    type: time
    timeframes: [raw, time, date]
    sql: ${TABLE}.resumed_at ;;
  }
  dimension: resume_step {
    type: number
    sql: ${TABLE}.resume_step ;;
  }
  dimension: max_step_before {
    type: number
    sql: ${TABLE}.max_step_before ;;
  }
  measure: disruptions {
    type: count
    drill_fields: [run_name, disruption_no, last_step_start_time, resumed_time, resume_step, wasted_seconds]
  }
  measure: wasted_seconds {
    description: "Progress redone after the restarts (WASTED_PROGRESS_FROM_DISRUPTION)."
    type: sum
    sql: ${TABLE}.wasted_seconds ;;
  }
  measure: infrastructure_recovery_seconds {
    type: sum
    sql: ${TABLE}.infrastructure_recovery_seconds ;;
  }
}
