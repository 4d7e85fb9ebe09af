"""What a campaign's figures say: `document` writes the report (markdown and HTML) beside the paper's figures
(`paper`, with our targets), `table1` rebuilds the paper's Table 1, `tables` and `stats` are the tables, plots
and latency statistics the CLI prints too."""
