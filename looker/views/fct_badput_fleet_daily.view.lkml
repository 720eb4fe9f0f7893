view: fct_badput_fleet_daily {
  sql_table_name: `goodput.fct_badput_fleet_daily` ;;

  dimension: key {
    primary_key: yes
    hidden: yes
    sql: concat(cast(${TABLE}.day as string), '/', ${TABLE}.gcm_badput_source) ;;
  }
  dimension_group: day {
    type: time
    datatype: date
    timeframes: [raw, date, week, month]
    sql: ${TABLE}.day ;;
  }
  dimension: badput_type {
    type: string
    sql: ${TABLE}.badput_type ;;
  }
  dimension: gcm_badput_source {
    description: "The bucket as the library's monitor labels it (custom events per type)."
    type: string
    sql: ${TABLE}.gcm_badput_source ;;
  }
  dimension: counts_against_goodput {
    type: yesno
    sql: ${TABLE}.counts_against_goodput ;;
  }
  measure: badput_seconds {
    type: sum
    sql: ${TABLE}.badput_seconds ;;
  }
  measure: elapsed_seconds {
    hidden: yes
    description: "The fleet's elapsed seconds of each day, once per day."
    type: sum_distinct
    sql_distinct_key: ${TABLE}.day ;;
    sql: ${TABLE}.elapsed_seconds ;;
  }
  measure: badput_share_pct {
    description: "The bucket's share of the fleet's elapsed time over the days selected."
    type: number
    value_format_name: decimal_2
    sql: 100 * ${badput_seconds} / nullif(${elapsed_seconds}, 0) ;;
  }
}
