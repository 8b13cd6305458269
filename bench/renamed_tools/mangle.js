// Renamed copies for bench/renamed.py: terser with mangle on, compress off and beautified output,
// so that a copy differs from its original by local names (and layout) only.
// Usage: node mangle.js JOBS.json, where JOBS.json is [[source, destination], ...].
// Prints {"terser": version, "errors": {source: message}} on stdout.
"use strict";

const fs = require("fs");
const { minify } = require("terser");

const OPTIONS = {
    compress: false,
    mangle: true,
    format: {
        beautify: true,
        comments: false,
        quote_style: 3, // the original quotes of each string
        keep_numbers: true, // numbers as written (0x10 stays 0x10)
        keep_quoted_props: true, // {"a": 1} keeps its quotes
    },
};

async function main() {
    const jobs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
    const errors = {};
    for (const [source, destination] of jobs) {
        try {
            const result = await minify(fs.readFileSync(source, "utf8"), OPTIONS);
            fs.writeFileSync(destination, result.code + "\n");
        } catch (error) {
            errors[source] = String(error.message || error).split("\n")[0];
        }
    }
    const version = require("terser/package.json").version;
    process.stdout.write(JSON.stringify({ terser: version, errors }));
}

main();
