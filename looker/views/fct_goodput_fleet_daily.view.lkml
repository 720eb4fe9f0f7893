view: fct_goodput_fleet_daily {
  sql_table_name: `goodput.fct_goodput_fleet_daily` ;;

  dimension_group: day {
    type: time
    datatype: date
    timeframes: [raw, date, week, month]
    sql: ${TABLE}.day ;;
  }
  dimension: is_open {
    description: "Some run is still running on this day: its figures grow at the next build."
    type: yesno
    sql: ${TABLE}.is_open ;;
  }
  measure: runs {
    description: "Runs with a valid Goodput that ran (summed over the days selected: run-days)."
    type: sum
    sql: ${TABLE}.runs ;;
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
    description: "The fleet's productive over elapsed seconds of the days selected (time weighted)."
    type: number
    value_format_name: decimal_2
    sql: 100 * ${productive_seconds} / nullif(${elapsed_seconds}, 0) ;;
    drill_fields: [day_date, runs, goodput_pct]
  }
  measure: disruptions {
    type: sum
    sql: ${TABLE}.disruptions ;;
  }
}
