//! Cost formulas: numbers, names, `+ - * /`, parentheses, `max(a, b)`,
//! `min(a, b)` and unary minus, parsed with `nom`. Names are resolved at
//! evaluation time through a lookup function, so the same formula serves any
//! parameter set.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, multispace0};
use nom::combinator::{all_consuming, map, opt, recognize};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded};
use nom::{IResult, Parser};

/// A parsed formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Name(String),
    Neg(Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
}

/// A formula that does not parse; `column` is 1-based within the formula.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ExprError {
    pub column: usize,
    pub message: String,
}

fn ws<'a, O>(
    p: impl Parser<&'a str, Output = O, Error = nom::error::Error<&'a str>>,
) -> impl Parser<&'a str, Output = O, Error = nom::error::Error<&'a str>> {
    delimited(multispace0, p, multispace0)
}

fn number(i: &str) -> IResult<&str, Expr> {
    map(
        recognize(pair(
            take_while1(|c: char| c.is_ascii_digit()),
            opt(pair(char('.'), take_while(|c: char| c.is_ascii_digit()))),
        )),
        |s: &str| Expr::Num(s.parse().unwrap_or(0.0)),
    )
    .parse(i)
}

fn name(i: &str) -> IResult<&str, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))
    .parse(i)
}

fn call_or_name(i: &str) -> IResult<&str, Expr> {
    let (rest, n) = name(i)?;
    let (after, args) = opt(delimited(
        ws(char('(')),
        separated_list1(ws(char(',')), expr),
        ws(char(')')),
    ))
    .parse(rest)?;
    match (n, args) {
        (_, None) => Ok((after, Expr::Name(n.to_string()))),
        ("max" | "min", Some(mut a)) if a.len() == 2 => {
            let y = Box::new(a.pop().expect("two"));
            let x = Box::new(a.pop().expect("two"));
            Ok((after, if n == "max" { Expr::Max(x, y) } else { Expr::Min(x, y) }))
        }
        _ => Err(nom::Err::Failure(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        ))),
    }
}

fn factor(i: &str) -> IResult<&str, Expr> {
    ws(alt((
        number,
        call_or_name,
        delimited(char('('), expr, ws(char(')'))),
        map(preceded(char('-'), factor), |e| Expr::Neg(Box::new(e))),
    )))
    .parse(i)
}

fn term(i: &str) -> IResult<&str, Expr> {
    let (mut i, mut acc) = factor(i)?;
    while let Ok((rest, op)) = ws(alt((tag::<_, _, nom::error::Error<&str>>("*"), tag("/")))).parse(i) {
        let (rest, rhs) = factor(rest)?;
        acc = if op == "*" {
            Expr::Mul(Box::new(acc), Box::new(rhs))
        } else {
            Expr::Div(Box::new(acc), Box::new(rhs))
        };
        i = rest;
    }
    Ok((i, acc))
}

fn expr(i: &str) -> IResult<&str, Expr> {
    let (mut i, mut acc) = term(i)?;
    while let Ok((rest, op)) = ws(alt((tag::<_, _, nom::error::Error<&str>>("+"), tag("-")))).parse(i) {
        let (rest, rhs) = term(rest)?;
        acc = if op == "+" {
            Expr::Add(Box::new(acc), Box::new(rhs))
        } else {
            Expr::Sub(Box::new(acc), Box::new(rhs))
        };
        i = rest;
    }
    Ok((i, acc))
}

/// `x / d`, and 0 where `d` is 0: the formulas' division, evaluated or
/// folded.
fn quotient(x: f64, d: f64) -> f64 {
    if d == 0.0 {
        0.0
    } else {
        x / d
    }
}

impl Expr {
    /// Parses a formula.
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        if src.trim().is_empty() {
            return Err(ExprError {
                column: 1,
                message: "empty formula".into(),
            });
        }
        match all_consuming(ws(expr)).parse(src) {
            Ok((_, e)) => Ok(e),
            Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
                let column = src.len() - e.input.len() + 1;
                let found = e.input.trim_start();
                let message = if e.code == nom::error::ErrorKind::Verify {
                    let n = found.split('(').next().unwrap_or(found);
                    format!("unknown function '{n}' (only max(a, b) and min(a, b) exist)")
                } else if found.is_empty() {
                    "formula ends too early".to_string()
                } else {
                    format!("unexpected '{}'", found.chars().next().unwrap_or(' '))
                };
                Err(ExprError { column, message })
            }
            Err(nom::Err::Incomplete(_)) => Err(ExprError {
                column: src.len() + 1,
                message: "formula ends too early".into(),
            }),
        }
    }

    /// Every name the formula mentions.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let Expr::Name(n) = e {
                out.push(n.as_str());
            }
        });
        out
    }

    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Num(_) | Expr::Name(_) => {}
            Expr::Neg(a) => a.visit(f),
            Expr::Add(a, b)
            | Expr::Sub(a, b)
            | Expr::Mul(a, b)
            | Expr::Div(a, b)
            | Expr::Max(a, b)
            | Expr::Min(a, b) => {
                a.visit(f);
                b.visit(f);
            }
        }
    }

    /// This expression with each name `known` gives put in (its own
    /// expression), and every part whose operands are then numbers computed.
    /// It evaluates to what this one does with the names put in, to the
    /// bit: each operation is the one `eval` would make, on the same
    /// numbers in the same order.
    pub fn fold(&self, known: &dyn Fn(&str) -> Option<Expr>) -> Expr {
        let two = |a: &Expr, b: &Expr, op: fn(f64, f64) -> f64, make: fn(Box<Expr>, Box<Expr>) -> Expr| match (
            a.fold(known),
            b.fold(known),
        ) {
            (Expr::Num(x), Expr::Num(y)) => Expr::Num(op(x, y)),
            (x, y) => make(Box::new(x), Box::new(y)),
        };
        match self {
            Expr::Num(v) => Expr::Num(*v),
            Expr::Name(n) => known(n).unwrap_or_else(|| Expr::Name(n.clone())),
            Expr::Neg(a) => match a.fold(known) {
                Expr::Num(x) => Expr::Num(-x),
                x => Expr::Neg(Box::new(x)),
            },
            Expr::Add(a, b) => two(a, b, |x, y| x + y, Expr::Add),
            Expr::Sub(a, b) => two(a, b, |x, y| x - y, Expr::Sub),
            Expr::Mul(a, b) => two(a, b, |x, y| x * y, Expr::Mul),
            Expr::Div(a, b) => two(a, b, quotient, Expr::Div),
            Expr::Max(a, b) => two(a, b, f64::max, Expr::Max),
            Expr::Min(a, b) => two(a, b, f64::min, Expr::Min),
        }
    }

    /// Evaluates with `lookup` resolving names (names were checked when the model loaded).
    pub fn eval(&self, lookup: &dyn Fn(&str) -> f64) -> f64 {
        match self {
            Expr::Num(v) => *v,
            Expr::Name(n) => lookup(n),
            Expr::Neg(a) => -a.eval(lookup),
            Expr::Add(a, b) => a.eval(lookup) + b.eval(lookup),
            Expr::Sub(a, b) => a.eval(lookup) - b.eval(lookup),
            Expr::Mul(a, b) => a.eval(lookup) * b.eval(lookup),
            Expr::Div(a, b) => quotient(a.eval(lookup), b.eval(lookup)),
            Expr::Max(a, b) => a.eval(lookup).max(b.eval(lookup)),
            Expr::Min(a, b) => a.eval(lookup).min(b.eval(lookup)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn eval(src: &str, r: f64, b: f64) -> f64 {
        Expr::parse(src).unwrap().eval(&|n| match n {
            "r" => r,
            "b" => b,
            _ => panic!("{n}"),
        })
    }

    #[test]
    fn precedence_functions_and_clamps() {
        assert_eq!(
            eval("98 + 2 * r + max(0, r - 3) + max(0, r - 2) + max(0, b - 37)", 1.0, 4.0),
            100.0
        );
        assert_eq!(
            eval("98 + 2*r + max(0,r-3) + max(0,r-2) + max(0,b-37)", 3.0, 138.0),
            206.0
        );
        assert_eq!(eval("(1 + 2) * 3 - -1", 0.0, 0.0), 10.0);
        assert_eq!(eval("min(r, 2) / 2", 3.0, 0.0), 1.0);
        assert_eq!(eval("2.5 * 2", 0.0, 0.0), 5.0);
    }

    #[test]
    fn errors_have_columns() {
        assert_eq!(
            Expr::parse("1 + ").unwrap_err(),
            ExprError {
                column: 5,
                message: "formula ends too early".into()
            }
        );
        assert_eq!(
            Expr::parse("1 + * 2").unwrap_err(),
            ExprError {
                column: 5,
                message: "unexpected '*'".into()
            }
        );
        assert_eq!(Expr::parse("1 + 2)").unwrap_err().column, 6);
        assert_eq!(
            Expr::parse("pow(2, 3)").unwrap_err().message,
            "unknown function 'pow' (only max(a, b) and min(a, b) exist)"
        );
        assert_eq!(Expr::parse("").unwrap_err().message, "empty formula");
        assert_eq!(Expr::parse("max(1)").unwrap_err().column, 1);
    }

    #[test]
    fn names_are_listed() {
        let e = Expr::parse("a + max(b, c_1) * 2").unwrap();
        assert_eq!(e.names(), vec!["a", "b", "c_1"]);
    }

    /// Any expression over numbers (zero among them, for the division's
    /// rule) and the names `b`, `n`, `p`, `q`.
    fn any_expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            prop_oneof![Just(0.0), Just(1.0), Just(-2.5), Just(37.0), Just(0.1), -1e3..1e3f64].prop_map(Expr::Num),
            prop_oneof![Just("b"), Just("n"), Just("p"), Just("q")].prop_map(|n| Expr::Name(n.into())),
        ];
        leaf.prop_recursive(6, 64, 2, |e| {
            let pair = (e.clone(), e.clone()).prop_map(|(a, b)| (Box::new(a), Box::new(b)));
            prop_oneof![
                e.prop_map(|a| Expr::Neg(Box::new(a))),
                pair.clone().prop_map(|(a, b)| Expr::Add(a, b)),
                pair.clone().prop_map(|(a, b)| Expr::Sub(a, b)),
                pair.clone().prop_map(|(a, b)| Expr::Mul(a, b)),
                pair.clone().prop_map(|(a, b)| Expr::Div(a, b)),
                pair.clone().prop_map(|(a, b)| Expr::Max(a, b)),
                pair.prop_map(|(a, b)| Expr::Min(a, b)),
            ]
        })
    }

    proptest! {
        #[test]
        fn never_panics(s in "[a-z0-9 +*/(),.-]{0,40}") {
            let _ = Expr::parse(&s);
        }

        /// Folding the known names in gives, to the bit, what evaluating
        /// with them gives; `q`'s expression names `b` itself.
        #[test]
        fn folding_evaluates_to_the_bit(e in any_expr(), p in prop_oneof![Just(0.0), -50.0..50.0f64], b in -100.0..100.0f64, n in 0u32..2000) {
            let q = Expr::Add(Box::new(Expr::Name("b".into())), Box::new(Expr::Num(p)));
            let value = |x: &str| match x {
                "b" => b,
                "n" => f64::from(n),
                "p" => p,
                _ => b + p,
            };
            let folded = e.fold(&|x| match x {
                "p" => Some(Expr::Num(p)),
                "q" => Some(q.clone()),
                _ => None,
            });
            let left = |x: &str| match x {
                "b" => b,
                "n" => f64::from(n),
                _ => f64::NAN,
            };
            prop_assert_eq!(folded.eval(&left).to_bits(), e.eval(&value).to_bits());
        }
    }
}
