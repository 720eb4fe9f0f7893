view: fct_steps {
  sql_table_name: `goodput.fct_steps` ;;

  dimension: key {
    primary_key: yes
    hidden: yes
    sql: concat(${TABLE}.run_id, '/', cast(${TABLE}.event_seq as string)) ;;
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
  dimension: segment_no {
    description: "0 before the first restart, then one more after each."
    type: number
    sql: ${TABLE}.segment_no ;;
  }
  dimension: step_count {
    type: number
    sql: ${TABLE}.step_count ;;
  }
  dimension_group: step_start {
    type: time
    timeframes: [raw, time, minute, hour, date]
    sql: ${TABLE}.step_start_at ;;
  }
  dimension: interval_class {
    description: "productive, wasted (redone after a restart), skipped or ignored: how the library counts the step's time."
    type: string
    sql: ${TABLE}.interval_class ;;
  }
  dimension: is_restart {
    type: yesno
    sql: ${TABLE}.is_restart ;;
  }
  measure: steps {
    type: count
    drill_fields: [run_name, step_count, step_start_time, interval_class, duration_seconds]
  }
  measure: duration_seconds {
    type: sum
    sql: ${TABLE}.duration_seconds ;;
  }
  measure: productive_seconds {
    type: sum
    sql: ${TABLE}.productive_seconds ;;
  }
  measure: mean_step_seconds {
    type: average
    value_format_name: decimal_3
    sql: ${TABLE}.duration_seconds ;;
  }
  measure: mean_deviation_seconds {
    description: "Mean of the step time minus the ideal step time, over the steps the library's deviation reads."
    type: average
    value_format_name: decimal_3
    sql: ${TABLE}.deviation_seconds ;;
  }
}
