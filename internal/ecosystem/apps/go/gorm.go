package main

import (
	"errors"

	"github.com/shopspring/decimal"
	"gorm.io/datatypes"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Customer has many Orders; an Order has many Lines, each of a Product.
type Customer struct {
	ID     uint
	Email  string `gorm:"uniqueIndex;size:120;not null"`
	Orders []Order
}

type Product struct {
	ID    uint
	SKU   string          `gorm:"uniqueIndex;size:20;not null"`
	Price decimal.Decimal `gorm:"type:numeric(10,2);not null"`
	Attrs datatypes.JSON
}

type Order struct {
	ID         uint
	CustomerID uint `gorm:"not null"`
	Ref        string
	Lines      []Line
}

type Line struct {
	ID        uint
	OrderID   uint `gorm:"not null;uniqueIndex:order_product"`
	ProductID uint `gorm:"not null;uniqueIndex:order_product"`
	Product   Product
	Qty       int
}

// gormApp: GORM with its postgres driver, default options: AutoMigrate,
// then AutoMigrate again on a new connection (as a restarted app does:
// GORM reads the catalogs to decide what to change), creating with
// associations, Preload, FirstOrCreate, a transaction with a nested one
// rolled back, and an update read back.
func gormApp(url string) app {
	var db *gorm.DB
	open := func() (err error) {
		db, err = gorm.Open(postgres.Open(url), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
		return err
	}
	models := []any{&Customer{}, &Product{}, &Order{}, &Line{}}
	return app{
		{"open", open},
		{"auto_migrate", func() error { return db.AutoMigrate(models...) }},
		{"auto_migrate_again", func() error {
			if err := open(); err != nil {
				return err
			}
			return db.AutoMigrate(models...)
		}},
		{"create_with_associations", func() error {
			p1 := Product{SKU: "pen", Price: decimal.RequireFromString("1.20"), Attrs: datatypes.JSON(`{"ink":"blue"}`)}
			p2 := Product{SKU: "pad", Price: decimal.RequireFromString("3.45")}
			if err := db.Create(&[]*Product{&p1, &p2}).Error; err != nil {
				return err
			}
			c := Customer{Email: "ada@example.com", Orders: []Order{
				{Ref: "A1", Lines: []Line{{ProductID: p1.ID, Qty: 3}, {ProductID: p2.ID, Qty: 1}}},
				{Ref: "A2", Lines: []Line{{ProductID: p2.ID, Qty: 2}}},
			}}
			return db.Create(&c).Error
		}},
		{"preload", func() error {
			var c Customer
			if err := db.Preload("Orders.Lines.Product").Where("email = ?", "ada@example.com").First(&c).Error; err != nil {
				return err
			}
			total := decimal.Zero
			for _, o := range c.Orders {
				for _, l := range o.Lines {
					total = total.Add(l.Product.Price.Mul(decimal.NewFromInt(int64(l.Qty))))
				}
			}
			return check(len(c.Orders) == 2 && total.String() == "13.95", "orders %d total %s", len(c.Orders), total)
		}},
		{"first_or_create", func() error {
			var c Customer
			if err := db.Where(Customer{Email: "bob@example.com"}).FirstOrCreate(&c).Error; err != nil {
				return err
			}
			var again Customer
			if err := db.Where(Customer{Email: "bob@example.com"}).FirstOrCreate(&again).Error; err != nil {
				return err
			}
			return check(c.ID == again.ID, "FirstOrCreate made two rows")
		}},
		{"nested_transaction", func() error {
			errDup := errors.New("rolled back")
			err := db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Create(&Customer{Email: "cy@example.com"}).Error; err != nil {
					return err
				}
				if err := tx.Transaction(func(tx2 *gorm.DB) error {
					if err := tx2.Create(&Customer{Email: "dee@example.com"}).Error; err != nil {
						return err
					}
					return errDup
				}); !errors.Is(err, errDup) {
					return err
				}
				return nil
			})
			if err != nil {
				return err
			}
			var n int64
			if err := db.Model(&Customer{}).Count(&n).Error; err != nil {
				return err
			}
			return check(n == 3, "customers %d", n)
		}},
		{"update", func() error {
			if err := db.Model(&Product{}).Where("sku = ?", "pen").Update("price", gorm.Expr("price + ?", 1)).Error; err != nil {
				return err
			}
			var p Product
			if err := db.First(&p, "sku = ?", "pen").Error; err != nil {
				return err
			}
			return check(p.Price.String() == "2.2", "price %s", p.Price)
		}},
	}
}
