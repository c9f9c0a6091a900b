//! The columns of `timeseries.csv`: the campaign writes a row under [`HEADER`] per interval,
//! the report looks its columns up by these names.

/// The columns, in the order the campaign writes them.
pub const COLUMNS: [&str; 9] = [
    "elapsed_s",
    "executions",
    "execs_per_s",
    "op_types_pct",
    "op_pairs_pct",
    "params_pct",
    "inputs_pct",
    "findings",
    "illegal",
];

/// The first line of the file: [`COLUMNS`], comma-separated, with its newline.
pub const HEADER: &str = "elapsed_s,executions,execs_per_s,op_types_pct,op_pairs_pct,params_pct,inputs_pct,findings,illegal\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_the_columns() {
        assert_eq!(HEADER, format!("{}\n", COLUMNS.join(",")));
    }
}
