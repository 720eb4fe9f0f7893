view: fct_goodput_rolling {
  sql_table_name: `goodput.fct_goodput_rolling` ;;

  dimension: key {
    primary_key: yes
    hidden: yes
    sql: concat(${TABLE}.run_id, '/', cast(${TABLE}.window_seconds as string), '/', cast(${TABLE}.window_end_epoch as string)) ;;
  }
  dimension: run_id {
    hidden: yes
    type: string
    sql: ${TABLE}.run_id ;;
  }
  dimension: project_id {
    type: string
    sql: ${TABLE}.project_id ;;
  }
  dimension: run_name {
    type: string
    sql: ${TABLE}.run_name ;;
  }
  dimension: window_seconds {
    type: number
    sql: ${TABLE}.window_seconds ;;
  }
  dimension: window_size {
    description: "1h, 1d, 3d, 5d: the library's monitor windows."
    type: string
    sql: case ${TABLE}.window_seconds when 3600 then '1h' when 86400 then '1d' when 259200 then '3d'
           when 432000 then '5d' else concat(cast(${TABLE}.window_seconds as string), 's') end ;;
  }
  dimension: window_end_epoch {
    hidden: yes
    type: number
    sql: ${TABLE}.window_end_epoch ;;
  }
  dimension_group: window_end {
    type: time
    timeframes: [raw, time, minute, hour, date, week]
    sql: ${TABLE}.window_end_at ;;
  }
  dimension: is_partial {
    type: yesno
    sql: ${TABLE}.is_partial ;;
  }
  dimension: max_productive_step {
    type: number
    sql: ${TABLE}.max_productive_step ;;
  }
  measure: elapsed_seconds {
    type: sum
    sql: ${TABLE}.elapsed_seconds ;;
  }
  measure: productive_seconds {
    type: sum
    sql: ${TABLE}.productive_seconds ;;
  }
  measure: goodput_pct {
    description: "Rolling Goodput: productive over elapsed seconds of the selected windows."
    type: number
    value_format_name: decimal_2
    sql: 100 * ${productive_seconds} / nullif(${elapsed_seconds}, 0) ;;
  }
  measure: stepping_slice_efficiency {
    description: "Elastic runs: time-weighted share of slices stepping over the selected windows (each window's ElasticGoodputCalculator weighting)."
    type: number
    value_format_name: decimal_3
    sql: sum(${TABLE}.stepping_slice_efficiency * ${TABLE}.elapsed_seconds)
      / nullif(sum(case when ${TABLE}.stepping_slice_efficiency is not null then ${TABLE}.elapsed_seconds end), 0) ;;
  }
  measure: available_slice_efficiency {
    description: "Elastic runs: time-weighted share of slices available over the selected windows (each window's ElasticGoodputCalculator weighting)."
    type: number
    value_format_name: decimal_3
    sql: sum(${TABLE}.available_slice_efficiency * ${TABLE}.elapsed_seconds)
      / nullif(sum(case when ${TABLE}.available_slice_efficiency is not null then ${TABLE}.elapsed_seconds end), 0) ;;
  }
  measure: disruptions {
    type: sum
    sql: ${TABLE}.disruptions ;;
  }
}
