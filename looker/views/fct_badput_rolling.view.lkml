view: fct_badput_rolling {
  sql_table_name: `goodput.fct_badput_rolling` ;;

  dimension: key {
    primary_key: yes
    hidden: yes
    sql: concat(${TABLE}.run_id, '/', cast(${TABLE}.window_seconds as string), '/',
           cast(${TABLE}.window_end_epoch as string), '/', ${TABLE}.gcm_badput_source) ;;
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
  dimension: window_end_epoch {
    hidden: yes
    type: number
    sql: ${TABLE}.window_end_epoch ;;
  }
  dimension_group: window_end {
    type: time
    timeframes: [raw, minute, hour, date, week]
    sql: ${TABLE}.window_end_at ;;
  }
  dimension: badput_type {
    type: string
    sql: ${TABLE}.badput_type ;;
  }
  dimension: badput_source {
    description: "As the library labels it in Cloud Monitoring (CUSTOM_BADPUT_EVENTS.<TYPE> for custom events)."
    type: string
    sql: ${TABLE}.gcm_badput_source ;;
  }
  dimension: counts_against_goodput {
    description: "From the Badput catalogue: false for buckets that overlap training (DATA_LOADING_ASYNC)."
    type: yesno
    sql: ${TABLE}.counts_against_goodput ;;
  }
  measure: badput_seconds {
    type: sum
    sql: ${TABLE}.badput_seconds ;;
  }
  measure: window_elapsed_seconds {
    hidden: yes
    type: sum
    sql: ${TABLE}.elapsed_seconds ;;
  }
}
