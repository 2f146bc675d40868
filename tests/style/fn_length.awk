# Each function definition's length in lines: from its signature's first
# line (at column 0) to its closing "}" at column 0. A definition is a "{"
# alone on a line whose signature line(s) above end in ")".
{ line[NR] = $0 }
END {
  for (i = 2; i <= NR; i++) {
    if (line[i] != "{" || line[i-1] !~ /\)$/) continue
    j = i - 1
    while (j > 1 && line[j] ~ /^[ \t]/) j--
    if (line[j] !~ /^[A-Za-z_]/ || line[j] ~ /^(typedef|struct|enum|union|static const)/ && line[j] !~ /\(/) continue
    for (k = i + 1; k <= NR && line[k] != "}"; k++) ;
    name = line[j]; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
    print k - j + 1 "\t" FILENAME ":" name
  }
}
