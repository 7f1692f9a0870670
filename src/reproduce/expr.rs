//! A claim's metric: an arithmetic expression over the columns of a sweep's `summary.csv`.
//!
//! ```text
//! 100 * cct_increase[host.cc=dctcp, lb.policy=reps] / cct_increase[host.cc=dctcp, lb.policy=ofan]
//! max(queues.edge_agg.max_bytes[lb.policy=reps], queues.edge_agg.max_bytes[lb.policy=ar])
//! ```
//!
//! A column reference `NAME[FIELD=VALUE, ...]` names a result column (`NAME_mean` and
//! `NAME_se` of `summary.csv`) and selects the one row whose varied fields have those values;
//! without a selector the table must have exactly one row. Values carry their standard error,
//! propagated to first order as if the terms were independent (sums add variances, products
//! and quotients add relative variances); `min`/`max` keep the chosen term's error.
//!
//! `NAME@min[...]` and `NAME@max[...]` read the extreme over the row's runs instead of the mean
//! (`NAME_min`, `NAME_max`), for claims such as "the minimum over 1,000 iterations"; an extreme
//! carries no standard error.

use anyhow::{anyhow, bail, Result};

/// A number with its standard error (0 when unknown: one seed, or a constant).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Measured {
    pub value: f64,
    pub se: f64,
}

impl Measured {
    pub(crate) fn exact(value: f64) -> Measured {
        Measured { value, se: 0.0 }
    }
}

/// One `FIELD=VALUE` of a selector, or `FIELD~TEXT`: the cell contains TEXT (for fields whose
/// values are tables, such as `lb.mixed`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Condition {
    pub field: String,
    pub value: String,
    pub contains: bool,
}

impl Condition {
    pub(crate) fn text(&self) -> String {
        let op = if self.contains { "~" } else { "=" };
        format!("{}{op}{}", self.field, self.value)
    }
}

/// A column, the statistic over the row's runs, and the row it is read from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ColumnRef {
    pub column: String,
    pub stat: Stat,
    pub select: Vec<Condition>,
}

/// Which of a summary row's statistics a column reference reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stat {
    /// The mean, with its standard error.
    Mean,
    /// The smallest value over the runs.
    Min,
    /// The largest value over the runs.
    Max,
}

impl Stat {
    /// The suffix of its column in `summary.csv`.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::Min => "min",
            Stat::Max => "max",
        }
    }
}

impl ColumnRef {
    /// The reference as written, without its selector: `NAME` or `NAME@min`.
    pub(crate) fn name(&self) -> String {
        match self.stat {
            Stat::Mean => self.column.clone(),
            s => format!("{}@{}", self.column, s.suffix()),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    Number(f64),
    Column(ColumnRef),
    Neg(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Func {
    Min,
    Max,
    Abs,
}

/// Where the values of column references come from.
pub(crate) trait Lookup {
    fn get(&self, r: &ColumnRef) -> Result<Measured>;
}

impl Expr {
    pub(crate) fn parse(text: &str) -> Result<Expr> {
        let mut p = Parser {
            chars: text.chars().collect(),
            at: 0,
        };
        let e = p.sum()?;
        p.skip_space();
        if p.at < p.chars.len() {
            bail!("unexpected {:?} at character {}", p.rest(), p.at + 1);
        }
        Ok(e)
    }

    #[cfg(test)]
    /// Every column reference, in the order written.
    pub(crate) fn columns(&self) -> Vec<&ColumnRef> {
        let mut out = Vec::new();
        self.visit(&mut |c| out.push(c));
        out
    }

    #[cfg(test)]
    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a ColumnRef)) {
        match self {
            Expr::Number(_) => {}
            Expr::Column(c) => f(c),
            Expr::Neg(e) => e.visit(f),
            Expr::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.visit(f)),
        }
    }

    pub(crate) fn eval(&self, data: &dyn Lookup) -> Result<Measured> {
        Ok(match self {
            Expr::Number(v) => Measured::exact(*v),
            Expr::Column(c) => data.get(c)?,
            Expr::Neg(e) => {
                let m = e.eval(data)?;
                Measured {
                    value: -m.value,
                    se: m.se,
                }
            }
            Expr::Binary(op, a, b) => binary(*op, a.eval(data)?, b.eval(data)?)?,
            Expr::Call(f, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(data))
                    .collect::<Result<Vec<_>>>()?;
                call(*f, &vals)?
            }
        })
    }
}

fn binary(op: Op, a: Measured, b: Measured) -> Result<Measured> {
    let value = match op {
        Op::Add => a.value + b.value,
        Op::Sub => a.value - b.value,
        Op::Mul => a.value * b.value,
        Op::Div => {
            if b.value == 0.0 {
                bail!("division by zero");
            }
            a.value / b.value
        }
    };
    let se = match op {
        Op::Add | Op::Sub => a.se.hypot(b.se),
        // d(ab) = b da + a db; d(a/b) = da/b - a db/b².
        Op::Mul => (b.value * a.se).hypot(a.value * b.se),
        Op::Div => (a.se / b.value).hypot(a.value * b.se / (b.value * b.value)),
    };
    Ok(Measured { value, se })
}

fn call(f: Func, vals: &[Measured]) -> Result<Measured> {
    let pick = |better: fn(f64, f64) -> bool| {
        vals.iter()
            .copied()
            .reduce(|best, v| if better(v.value, best.value) { v } else { best })
            .ok_or_else(|| anyhow!("{f:?} of nothing"))
    };
    match f {
        Func::Min => pick(|a, b| a < b),
        Func::Max => pick(|a, b| a > b),
        Func::Abs => match vals {
            [m] => Ok(Measured {
                value: m.value.abs(),
                se: m.se,
            }),
            _ => bail!("abs takes one argument (got {})", vals.len()),
        },
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn rest(&self) -> String {
        self.chars[self.at..].iter().take(20).collect()
    }

    fn skip_space(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else if self.at >= self.chars.len() {
            bail!("expected '{c}' at the end")
        } else {
            bail!(
                "expected '{c}' at character {}, found {:?}",
                self.at + 1,
                self.rest()
            )
        }
    }

    fn sum(&mut self) -> Result<Expr> {
        let mut e = self.product()?;
        loop {
            let op = if self.eat('+') {
                Op::Add
            } else if self.eat('-') {
                Op::Sub
            } else {
                return Ok(e);
            };
            e = Expr::Binary(op, Box::new(e), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr> {
        let mut e = self.unary()?;
        loop {
            let op = if self.eat('*') {
                Op::Mul
            } else if self.eat('/') {
                Op::Div
            } else {
                return Ok(e);
            };
            e = Expr::Binary(op, Box::new(e), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr> {
        if self.eat('-') {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr> {
        match self.peek() {
            None => bail!("expected a number, a column or '(' at the end"),
            Some('(') => {
                self.at += 1;
                let e = self.sum()?;
                self.expect(')')?;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let name = self.word(|c| c.is_ascii_alphanumeric() || "_.".contains(c));
                if self.eat('(') {
                    let f = match name.as_str() {
                        "min" => Func::Min,
                        "max" => Func::Max,
                        "abs" => Func::Abs,
                        _ => bail!("{name}: unknown function (min, max, abs)"),
                    };
                    let mut args = vec![self.sum()?];
                    while self.eat(',') {
                        args.push(self.sum()?);
                    }
                    self.expect(')')?;
                    return Ok(Expr::Call(f, args));
                }
                let stat = if self.eat('@') {
                    match self.word(|c| c.is_ascii_alphabetic()).as_str() {
                        "min" => Stat::Min,
                        "max" => Stat::Max,
                        other => bail!("{name}@{other}: unknown statistic (@min, @max)"),
                    }
                } else {
                    Stat::Mean
                };
                let select = if self.eat('[') {
                    self.selector()?
                } else {
                    Vec::new()
                };
                Ok(Expr::Column(ColumnRef {
                    column: name,
                    stat,
                    select,
                }))
            }
            Some(_) => bail!(
                "expected a number, a column or '(' at character {}, found {:?}",
                self.at + 1,
                self.rest()
            ),
        }
    }

    fn word(&mut self, ok: impl Fn(char) -> bool) -> String {
        self.skip_space();
        let start = self.at;
        while self.chars.get(self.at).is_some_and(|&c| ok(c)) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    fn number(&mut self) -> Result<Expr> {
        let start = self.at;
        let text = self.word(|c| c.is_ascii_digit() || c == '.');
        let mut text = text;
        // An exponent: 1e-3, 2.5E6.
        if self
            .chars
            .get(self.at)
            .is_some_and(|c| *c == 'e' || *c == 'E')
        {
            let save = self.at;
            self.at += 1;
            let mut exp = String::from("e");
            if let Some(&s) = self.chars.get(self.at).filter(|c| **c == '-' || **c == '+') {
                exp.push(s);
                self.at += 1;
            }
            let digits = self.word(|c| c.is_ascii_digit());
            if digits.is_empty() {
                self.at = save;
            } else {
                text += &exp;
                text += &digits;
            }
        }
        text.parse::<f64>()
            .map(Expr::Number)
            .map_err(|_| anyhow!("{text:?} at character {}: not a number", start + 1))
    }

    fn selector(&mut self) -> Result<Vec<Condition>> {
        let mut out = Vec::new();
        loop {
            let field = self.word(|c| c.is_ascii_alphanumeric() || "_.".contains(c));
            if field.is_empty() {
                bail!(
                    "expected a field name in [...] at character {}",
                    self.at + 1
                );
            }
            let contains = self.eat('~');
            if !contains {
                self.expect('=')?;
            }
            let value = if self.eat('"') {
                let start = self.at;
                while self.chars.get(self.at).is_some_and(|&c| c != '"') {
                    self.at += 1;
                }
                let v: String = self.chars[start..self.at].iter().collect();
                self.expect('"')?;
                v
            } else {
                self.word(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
            };
            if value.is_empty() {
                bail!("{field}=: expected a value at character {}", self.at + 1);
            }
            if out.iter().any(|c: &Condition| c.field == field) {
                bail!("{field}: selected twice in one [...]");
            }
            out.push(Condition {
                field,
                value,
                contains,
            });
            if self.eat(']') {
                return Ok(out);
            }
            self.expect(',')?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;
    impl Lookup for Fixed {
        fn get(&self, r: &ColumnRef) -> Result<Measured> {
            match (
                r.column.as_str(),
                r.select.first().map(|c| c.value.as_str()),
            ) {
                ("a", Some("x")) => Ok(Measured {
                    value: 3.0,
                    se: 0.3,
                }),
                ("a", Some("y")) => Ok(Measured {
                    value: 4.0,
                    se: 0.4,
                }),
                ("b", None) => Ok(Measured::exact(2.0)),
                _ => bail!("no {r:?}"),
            }
        }
    }

    fn eval(s: &str) -> Measured {
        Expr::parse(s).unwrap().eval(&Fixed).unwrap()
    }

    #[test]
    fn arithmetic_follows_precedence() {
        assert_eq!(eval("1 + 2 * 3").value, 7.0);
        assert_eq!(eval("(1 + 2) * 3").value, 9.0);
        assert_eq!(eval("-2 - -3").value, 1.0);
        assert_eq!(eval("8 / 2 / 2").value, 2.0);
        assert_eq!(eval("1e-3 * 2E3").value, 2.0);
        assert_eq!(eval("max(1, 5, 2) - min(4, 3) + abs(-1)").value, 3.0);
    }

    #[test]
    fn errors_propagate_to_first_order() {
        let sum = eval("a[p=x] + a[p=y]");
        assert_eq!(sum.value, 7.0);
        assert!((sum.se - 0.5).abs() < 1e-12);
        // Relative errors 10 % and 10 % add in quadrature.
        let q = eval("a[p=y] / a[p=x]");
        assert!((q.value - 4.0 / 3.0).abs() < 1e-12);
        assert!((q.se / q.value - 0.02f64.sqrt()).abs() < 1e-12);
        assert!((eval("100 * a[p=x]").se - 30.0).abs() < 1e-12);
        assert_eq!(eval("max(a[p=x], a[p=y])").se, 0.4);
        assert_eq!(eval("b").se, 0.0);
    }

    #[test]
    fn selectors_parse_with_dotted_fields_and_quoted_values() {
        let e =
            Expr::parse("q.e_a.max_bytes[lb.policy=ofan, x=\"a b\", n=0.5, m~\"pods\"]").unwrap();
        let c = &e.columns()[0];
        assert_eq!(c.column, "q.e_a.max_bytes");
        let sel: Vec<(&str, &str)> = c
            .select
            .iter()
            .map(|c| (c.field.as_str(), c.value.as_str()))
            .collect();
        assert_eq!(
            sel,
            [
                ("lb.policy", "ofan"),
                ("x", "a b"),
                ("n", "0.5"),
                ("m", "pods")
            ]
        );
        assert!(c.select[3].contains && !c.select[0].contains);
    }

    #[test]
    fn malformed_expressions_are_refused_saying_where() {
        let e = |s: &str| Expr::parse(s).unwrap_err().to_string();
        assert!(e("1 +").contains("at the end"));
        assert!(e("a[p=x").contains("expected ','"));
        assert!(e("a[p=]").contains("expected a value"));
        assert!(e("a[p=x, p=y]").contains("selected twice"));
        assert!(e("mean(a)").contains("unknown function"));
        assert!(e("2 3").contains("unexpected"));
        let zero = Expr::parse("1 / (2 - 2)").unwrap().eval(&Fixed);
        assert!(zero.unwrap_err().to_string().contains("division by zero"));
    }
}
